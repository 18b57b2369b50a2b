package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/syncthing"
)

// STGUIAPIKEY is Syncthing's own variable for its API key; memminer reads
// it after its own syncthing_api_key setting.
const envSTGUIAPIKey = "STGUIAPIKEY"

// syncthingSettings is where the daemon finds Syncthing, or why it does not.
type syncthingSettings struct {
	URL    string
	APIKey string
	// KeyFrom names where the key came from (never the key itself).
	KeyFrom string
	// Off says why Syncthing is not followed; empty when it is.
	Off string
}

// resolveSyncthing picks Syncthing's address and API key: the
// syncthing_url and syncthing_api_key settings (keyFrom names where the key
// came from), then STGUIAPIKEY for the key, then Syncthing's own config.xml
// (found by find), then the default address. Without a key Syncthing cannot
// be asked, and Off says so.
func resolveSyncthing(url, key, keyFrom string, getenv func(string) string,
	find func() (string, syncthing.GUIConfig, error)) syncthingSettings {
	s := syncthingSettings{URL: url}
	switch {
	case key != "":
		s.APIKey, s.KeyFrom = key, keyFrom
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
		keySetting, _ := config.Lookup("syncthing_api_key")
		s.Off = fmt.Sprintf("no Syncthing API key: pass --%s, set %s or %s, or let memminer read Syncthing's config.xml",
			keySetting.Flag, keySetting.Env, envSTGUIAPIKey)
		if findErr != nil && !errors.Is(findErr, syncthing.ErrNoConfig) {
			s.Off += " (" + findErr.Error() + ")"
		}
	}
	return s
}

// syncthingClient returns a client of the Syncthing the settings name,
// or nil when it is not to be asked (s.Off says why).
func (a *app) syncthingClient(cmd *cobra.Command) (*syncthing.Client, syncthingSettings, error) {
	var s syncthingSettings
	if a.cfg.Syncthing {
		s = resolveSyncthing(a.cfg.SyncthingURL, a.cfg.SyncthingAPIKey, a.settingFrom(cmd, "syncthing_api_key"), a.getenv,
			func() (string, syncthing.GUIConfig, error) {
				return syncthing.FindConfig(syncthing.ConfigPaths(a.getenv)...)
			})
	} else {
		from := a.settingFrom(cmd, "syncthing")
		switch {
		case strings.HasPrefix(from, "--"):
			s.Off = "disabled by " + from
		case from == "syncthing":
			s.Off = "disabled by syncthing: false in the config file"
		default:
			s.Off = "disabled by " + from + "=false"
		}
	}
	if s.Off != "" {
		return nil, s, nil
	}
	client, err := syncthing.NewClient(s.URL, s.APIKey)
	if err != nil {
		return nil, s, usagef("%s: %v", a.settingFrom(cmd, "syncthing_url"), err)
	}
	return client, s, nil
}

// conflictsComponent builds the daemon's conflict registry from the
// settings run resolved, following client (nil: not followed, off says
// why).
func (a *app) conflictsComponent(cmd *cobra.Command, log *slog.Logger, client *syncthing.Client, s syncthingSettings) (*conflicts.Component, error) {
	opts := conflicts.Options{SyncthingOff: s.Off, AutoMerge: a.cfg.AutoMerge, MaxFileBytes: a.cfg.MaxFileBytes}
	if client != nil {
		opts.Syncthing = client
		log.Info("following syncthing for conflict copies", "url", client.BaseURL(), "api_key_from", s.KeyFrom)
	}
	if on := a.cfg.OnConflict; on != "" {
		argv, err := conflicts.SplitCommand(on)
		if err != nil {
			return nil, usagef("%s: %v", a.settingFrom(cmd, "on_conflict"), err)
		}
		opts.Command = argv
	}
	if opts.Webhook = a.cfg.ConflictWebhook; opts.Webhook != "" {
		if err := conflicts.CheckWebhook(opts.Webhook); err != nil {
			return nil, usagef("%s: %v", a.settingFrom(cmd, "conflict_webhook"), err)
		}
	}
	c, err := conflicts.New(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}
