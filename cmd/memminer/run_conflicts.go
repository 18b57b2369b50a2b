package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/memminer/memminer/daemon/conflicts"
	"github.com/memminer/memminer/syncthing"
)

// Environment variables of the run command's conflict settings.
const (
	envSyncthingURL     = "MEMMINER_SYNCTHING_URL"
	envSyncthingAPIKey  = "MEMMINER_SYNCTHING_API_KEY"
	envSTGUIAPIKey      = "STGUIAPIKEY" // Syncthing's own
	envOnConflict       = "MEMMINER_ON_CONFLICT"
	envConflictWebhook  = "MEMMINER_CONFLICT_WEBHOOK"
	flagSyncthingURL    = "syncthing-url"
	flagSyncthingAPIKey = "syncthing-api-key"
	flagNoSyncthing     = "no-syncthing"
	flagOnConflict      = "on-conflict"
	flagConflictWebhook = "conflict-webhook"
)

// conflictFlags are the run command's Syncthing and conflict-alert flags.
type conflictFlags struct {
	syncthingURL string
	apiKey       string
	noSyncthing  bool
	onConflict   string
	webhook      string
}

// register adds the flags to fs.
func (f *conflictFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.syncthingURL, flagSyncthingURL, syncthing.DefaultURL,
		"Syncthing's GUI/REST address, followed for conflict copies (env "+envSyncthingURL+"; unset: the address in Syncthing's config.xml, else the default)")
	fs.StringVar(&f.apiKey, flagSyncthingAPIKey, "",
		"Syncthing's API key (env "+envSyncthingAPIKey+" or "+envSTGUIAPIKey+"; unset: read from Syncthing's config.xml)")
	fs.BoolVar(&f.noSyncthing, flagNoSyncthing, false,
		"do not follow Syncthing's events; find conflict copies by scanning the hive at every mine tick only")
	fs.StringVar(&f.onConflict, flagOnConflict, "",
		"run this command for every new conflict, without a shell; details in MEMMINER_CONFLICT_* variables (env "+envOnConflict+")")
	fs.StringVar(&f.webhook, flagConflictWebhook, "",
		"POST every new conflict as JSON to this http(s) URL, retried with backoff (env "+envConflictWebhook+")")
}

// syncthingSettings is where the daemon finds Syncthing, or why it does not.
type syncthingSettings struct {
	URL    string
	APIKey string
	// KeyFrom names where the key came from (never the key itself).
	KeyFrom string
	// Off says why Syncthing is not followed; empty when it is.
	Off string
}

// resolveSyncthing picks Syncthing's address and API key: flag, then
// environment, then Syncthing's own config.xml (found by find), then the
// default address. Without a key Syncthing cannot be asked, and Off says so.
func resolveSyncthing(f conflictFlags, changed func(string) bool, getenv func(string) string,
	find func() (string, syncthing.GUIConfig, error)) syncthingSettings {
	if f.noSyncthing {
		return syncthingSettings{Off: "disabled by --" + flagNoSyncthing}
	}
	var s syncthingSettings
	switch {
	case changed(flagSyncthingURL):
		s.URL = f.syncthingURL
	case getenv(envSyncthingURL) != "":
		s.URL = getenv(envSyncthingURL)
	}
	switch {
	case f.apiKey != "":
		s.APIKey, s.KeyFrom = f.apiKey, "--"+flagSyncthingAPIKey
	case getenv(envSyncthingAPIKey) != "":
		s.APIKey, s.KeyFrom = getenv(envSyncthingAPIKey), envSyncthingAPIKey
	case getenv(envSTGUIAPIKey) != "":
		s.APIKey, s.KeyFrom = getenv(envSTGUIAPIKey), envSTGUIAPIKey
	}
	var findErr error
	if s.URL == "" || s.APIKey == "" {
		path, gui, err := find()
		switch {
		case err != nil:
			findErr = err
		default:
			if s.URL == "" {
				s.URL = gui.URL()
			}
			if s.APIKey == "" && gui.APIKey != "" {
				s.APIKey, s.KeyFrom = gui.APIKey, path
			}
		}
	}
	if s.URL == "" {
		s.URL = syncthing.DefaultURL
	}
	if s.APIKey == "" {
		s.Off = fmt.Sprintf("no Syncthing API key: pass --%s, set %s or %s, or let memminer read Syncthing's config.xml",
			flagSyncthingAPIKey, envSyncthingAPIKey, envSTGUIAPIKey)
		if findErr != nil && !errors.Is(findErr, syncthing.ErrNoConfig) {
			s.Off += " (" + findErr.Error() + ")"
		}
	}
	return s
}

// conflictsComponent builds the daemon's conflict registry from the run
// command's flags and environment.
func (a *app) conflictsComponent(f conflictFlags, changed func(string) bool, log *slog.Logger) (*conflicts.Component, error) {
	// a.cfg holds the config file's values with the environment's applied
	// over them; STGUIAPIKEY is Syncthing's own variable, not a setting.
	getenv := func(k string) string {
		switch k {
		case envSyncthingURL:
			return a.cfg.SyncthingURL
		case envSyncthingAPIKey:
			return a.cfg.SyncthingAPIKey
		case envOnConflict:
			return a.cfg.OnConflict
		case envConflictWebhook:
			return a.cfg.ConflictWebhook
		}
		return a.getenv(k)
	}
	s := syncthingSettings{Off: "disabled by syncthing: false (config file or MEMMINER_SYNCTHING)"}
	if changed(flagNoSyncthing) || a.cfg.Syncthing {
		s = resolveSyncthing(f, changed, getenv, func() (string, syncthing.GUIConfig, error) {
			return syncthing.FindConfig(syncthing.ConfigPaths(a.getenv)...)
		})
	}
	opts := conflicts.Options{SyncthingOff: s.Off}
	if s.Off == "" {
		client, err := syncthing.NewClient(s.URL, s.APIKey)
		if err != nil {
			return nil, usagef("--%s: %v", flagSyncthingURL, err)
		}
		opts.Syncthing = client
		log.Info("following syncthing for conflict copies", "url", client.BaseURL(), "api_key_from", s.KeyFrom)
	}
	on := f.onConflict
	if !changed(flagOnConflict) {
		on = getenv(envOnConflict)
	}
	if on != "" {
		argv, err := conflicts.SplitCommand(on)
		if err != nil {
			return nil, usagef("--%s: %v", flagOnConflict, err)
		}
		opts.Command = argv
	}
	opts.Webhook = f.webhook
	if !changed(flagConflictWebhook) {
		opts.Webhook = getenv(envConflictWebhook)
	}
	if opts.Webhook != "" {
		if err := conflicts.CheckWebhook(opts.Webhook); err != nil {
			return nil, usagef("--%s: %v", flagConflictWebhook, err)
		}
	}
	c, err := conflicts.New(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}
