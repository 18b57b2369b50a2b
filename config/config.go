// Package config holds memminer's settings: one Config struct filled from
// defaults, then a YAML file, then MEMMINER_* environment variables, then
// command-line flags, each overriding the one before.
//
// Every setting is declared once, as a row of the table in settings.go:
// its config key, environment variable, flag (if any), default, parser and
// help. Loading the file and the environment, the CLI's flags (registered
// from the table by cmd/memminer, which applies them over the rest in one
// place) and the settings table of the documentation all come from it.
//
// To add a setting:
//
//  1. add a field to Config;
//  2. add one row to the table, with a kind that parses and checks its
//     text (textKind, pathKind, choiceKind, boolKind, countKind,
//     durationKind, listKind; write a new kind when none fits);
//  3. if it has a flag, name its key in the settingFlags call of each
//     command in cmd/memminer that takes it (resolve applies it);
//  4. regenerate the documentation's table with
//     `go test ./cmd/memminer -run TestSettingsTable -update`.
//
// Errors are *Error values naming the setting and where its value came
// from; the CLI adds the advice.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is every setting memminer reads. Each field is declared as a
// setting in the table in settings.go, which names its key, environment
// variable, flag and default.
type Config struct {
	// Palace is the directory holding the palace.
	Palace string
	// Hive is the directory whose agents/<id>/memory.md files the daemon mines.
	Hive string
	// Agents are glob patterns, relative to the hive and `/`-separated,
	// of more directories that are agents besides agents/<id> (see
	// package hive). In the file: a list, or one string with the
	// patterns separated by commas.
	Agents []string
	// Model is the embedding model spec ("lexical", "use-lite", "ollama:NAME", "openai:NAME").
	Model string
	// Enabled turns memminer off without uninstalling it: mine and the daemon do nothing.
	Enabled bool
	// MaxFileBytes is the largest markdown file mined; larger ones are skipped with a warning.
	MaxFileBytes int64
	// LockTimeout is how long a writer waits for another writer's palace lock.
	LockTimeout time.Duration
	// MineInterval is the period of the daemon's mtime re-check.
	MineInterval time.Duration
	// StaleAfter is how long notes stay fresh when their file does not
	// say (govern.Note.Staleness); govern.Never when they never go stale.
	StaleAfter time.Duration
	// ModelCache is where downloaded models are kept.
	ModelCache string

	// Syncthing turns following the local Syncthing's events on or off.
	Syncthing bool
	// SyncthingURL is Syncthing's REST address; empty means the one in its config.xml.
	SyncthingURL string
	// SyncthingAPIKey is Syncthing's API key; empty means read config.xml.
	SyncthingAPIKey string
	// OnConflict is a command run (without a shell) for every new conflict.
	OnConflict string
	// ConflictWebhook is a URL every new conflict is POSTed to.
	ConflictWebhook string
	// AutoMerge has the daemon merge conflict copies that merge cleanly
	// as soon as it finds them.
	AutoMerge bool
	// MetricsAddr is the loopback host:port of the daemon's Prometheus metrics; empty: none.
	MetricsAddr string
	// MetricsToken has scrapes of MetricsAddr send the HTTP bearer token.
	MetricsToken bool
	// LogFormat is the daemon's log format: text or json.
	LogFormat string
	// LogLevel is the daemon's log level: debug, info, warn or error.
	LogLevel string

	// Wing is the agent's own wing, the one remember writes to; a harness
	// sets MEMMINER_WING per agent.
	Wing string
	// Machine names this machine in the memory files remember writes
	// (memory.<machine>.md); empty means hive.DefaultMachine.
	Machine string
	// MaxNoteBytes bounds the text of one note given to remember.
	MaxNoteBytes int64
	// CaptureTTL is how long a low-risk directive memminer capture writes
	// into memory holds before it is stale until reviewed;
	// govern.Never: no review date.
	CaptureTTL time.Duration
	// CaptureAskAfter is how many tool calls make a session's work
	// substantial: at its end the Stop hook asks the agent, once, to
	// record what it learned, unless it remembered something; 0: never.
	CaptureAskAfter int64
	// Index makes the daemon keep HIVE/INDEX.md current.
	Index bool
	// PreAction are the patterns of high-risk commands the pre-action log
	// records (package preaction); none: its defaults.
	PreAction []string
	// PreActionBlock has the pre-action hook ask the client to confirm a
	// high-risk command rather than only log it.
	PreActionBlock bool
	// Domains assign wings to domains, each WING=DOMAIN
	// (hive.DomainAssignments); they win over a wing's frontmatter domain:.
	Domains []string
}

// Default returns the built-in settings: each setting's Default, with
// $XDG_DATA_HOME and $XDG_CACHE_HOME read through getenv. A non-empty
// defaultModel replaces the model setting's default (the CLI passes the
// embed package's).
func Default(getenv func(string) string, defaultModel string) Config {
	var c Config
	for _, s := range settings {
		if s.Default == "" {
			continue
		}
		if err := s.kind.set(&c, expandXDG(getenv, s.Default)); err != nil {
			panic(fmt.Sprintf("config: setting %s: bad default: %v", s.Key, err))
		}
	}
	if defaultModel != "" {
		c.Model = defaultModel
	}
	return c
}

// expandXDG replaces a leading $XDG_DATA_HOME or $XDG_CACHE_HOME in a
// default with the directory it names.
func expandXDG(getenv func(string) string, v string) string {
	for _, d := range []struct{ name, fallback string }{{"XDG_DATA_HOME", ".local/share"}, {"XDG_CACHE_HOME", ".cache"}} {
		if rest, ok := strings.CutPrefix(v, "$"+d.name+"/"); ok {
			return filepath.Join(xdgDir(getenv, d.name, d.fallback), rest)
		}
	}
	return v
}

// DefaultFile is the config file read when none is named.
func DefaultFile(getenv func(string) string) string {
	return filepath.Join(Dir(getenv), "config.yml")
}

// Dir is memminer's per-user config directory,
// $XDG_CONFIG_HOME/memminer (or ~/.config/memminer): the default config
// file and the HTTP bearer token live there.
func Dir(getenv func(string) string) string {
	return filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", ".config"), "memminer")
}

// RuntimeDir is the per-user directory for what lives only while
// processes run (the record of running daemons): $XDG_RUNTIME_DIR when it
// is set to an absolute path, else the cache directory the model cache
// defaults to ($XDG_CACHE_HOME, or ~/.cache).
func RuntimeDir(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return xdgDir(getenv, "XDG_CACHE_HOME", ".cache")
}

func xdgDir(getenv func(string) string, key, fallback string) string {
	if d := getenv(key); d != "" && filepath.IsAbs(d) {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, fallback)
}

// ErrUnknownSetting is a key no setting has.
var ErrUnknownSetting = errors.New("unknown setting")

// ErrNotSet is a required setting left empty.
var ErrNotSet = errors.New("no value set")

// Error is a setting that could not be applied or that is not valid.
type Error struct {
	// Source says where the value came from: "config FILE: line N", an
	// environment variable, or "--flag"; empty when no one place did.
	Source string
	// Key is the setting's config key.
	Key string
	// Err says what is wrong; ErrUnknownSetting and ErrNotSet are matched
	// with errors.Is.
	Err error

	line int // of a config file's value, until LoadFile names the file
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source + ": ")
	}
	if errors.Is(e.Err, ErrUnknownSetting) {
		known := make([]string, 0, len(settings))
		for _, s := range settings {
			known = append(known, s.Key)
		}
		sort.Strings(known)
		fmt.Fprintf(&b, "%v %q (known: %s)", e.Err, e.Key, strings.Join(known, ", "))
		return b.String()
	}
	b.WriteString(e.Key + ": " + e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// LoadFile overlays the YAML file at path onto c. A missing file is an
// error only when required is true (the user named it explicitly).
// Unknown keys are errors, so a typo does not pass silently.
func (c *Config) LoadFile(path string, required bool) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	var doc map[string]yaml.Node
	// An empty file decodes as io.EOF: it sets nothing.
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the same first error every time
	for _, k := range keys {
		if err := c.setNode(k, doc[k]); err != nil {
			var se *Error
			if errors.As(err, &se) {
				se.Source = fmt.Sprintf("config %s: line %d", path, se.line)
			}
			return err
		}
	}
	return nil
}

// setNode sets the setting key from its YAML value.
func (c *Config) setNode(key string, n yaml.Node) error {
	s, known := Lookup(key)
	if !known {
		return &Error{Key: key, Err: ErrUnknownSetting, line: n.Line}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // `key: ~` or `key:` sets nothing
	}
	bad := func(line int, err error) error { return &Error{Key: key, Err: err, line: line} }
	if s.IsList() && n.Kind == yaml.SequenceNode {
		items := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return bad(item.Line, fmt.Errorf("want a list of %s, one per item", s.kind.items))
			}
			if item.Tag == "!!null" {
				continue
			}
			if err := s.kind.setList(&Config{}, []string{item.Value}); err != nil {
				return bad(item.Line, err) // names the line of the bad item
			}
			items = append(items, item.Value)
		}
		if err := s.kind.setList(c, items); err != nil {
			return bad(n.Line, err)
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		if s.IsList() {
			return bad(n.Line, fmt.Errorf("want a list of %s, or one string of them separated by commas", s.kind.items))
		}
		return bad(n.Line, errors.New("want a single value"))
	}
	// Values go through the same parser as the environment's.
	if err := s.kind.set(c, n.Value); err != nil {
		return bad(n.Line, err)
	}
	return nil
}

// ApplyEnv overlays the MEMMINER_* environment variables onto c. An empty
// variable sets nothing.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	for _, s := range settings {
		v := getenv(s.Env)
		if v == "" {
			continue
		}
		if err := s.kind.set(c, v); err != nil {
			return &Error{Source: s.Env, Key: s.Key, Err: err}
		}
	}
	return nil
}

// Set assigns one setting by its config key from text, as given in an
// environment variable or a flag. A list setting (agents) takes its items
// separated by commas.
func (c *Config) Set(key, v string) error {
	s, known := Lookup(key)
	if !known {
		return &Error{Key: key, Err: ErrUnknownSetting}
	}
	if err := s.kind.set(c, v); err != nil {
		return &Error{Key: key, Err: err}
	}
	return nil
}

// Validate reports the first setting a person has to fix: a required one
// left empty. Each value was checked when it was set.
func (c *Config) Validate() error {
	for _, s := range settings {
		if s.Required && s.kind.isZero(c) {
			return &Error{Key: s.Key, Err: ErrNotSet}
		}
	}
	return nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
