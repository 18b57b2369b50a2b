// Package config holds memminer's settings: one Config struct filled from
// defaults, then a YAML file, then MEMMINER_* environment variables, then
// command-line flags, each overriding the one before.
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
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memminer/memminer/internal/agentglob"
)

// Config is every setting memminer reads. The yaml tags are the keys of the
// config file.
type Config struct {
	// Palace is the directory holding the palace.
	Palace string `yaml:"palace"`
	// Hive is the directory whose agents/<id>/memory.md files the daemon mines.
	Hive string `yaml:"hive"`
	// Agents are glob patterns, relative to the hive and `/`-separated,
	// of more directories that are agents besides agents/<id> (see
	// internal/agentglob). In the file: a list, or one string with the
	// patterns separated by commas.
	Agents []string `yaml:"agents"`
	// Model is the embedding model spec ("lexical", "use-lite", "ollama:NAME", "openai:NAME").
	Model string `yaml:"model"`
	// Enabled turns memminer off without uninstalling it: mine and the daemon do nothing.
	Enabled bool `yaml:"enabled"`
	// MaxFileBytes is the largest markdown file mined; larger ones are skipped with a warning.
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// LockTimeout is how long a writer waits for another writer's palace lock.
	LockTimeout time.Duration `yaml:"lock_timeout"`
	// MineInterval is the period of the daemon's mtime re-check.
	MineInterval time.Duration `yaml:"mine_interval"`
	// ModelCache is where downloaded models are kept.
	ModelCache string `yaml:"model_cache"`

	// Syncthing turns following the local Syncthing's events on or off.
	Syncthing bool `yaml:"syncthing"`
	// SyncthingURL is Syncthing's REST address; empty means the one in its config.xml.
	SyncthingURL string `yaml:"syncthing_url"`
	// SyncthingAPIKey is Syncthing's API key; empty means read config.xml.
	SyncthingAPIKey string `yaml:"syncthing_api_key"`
	// OnConflict is a command run (without a shell) for every new conflict.
	OnConflict string `yaml:"on_conflict"`
	// ConflictWebhook is a URL every new conflict is POSTed to.
	ConflictWebhook string `yaml:"conflict_webhook"`
	// MetricsAddr is the loopback host:port of the daemon's Prometheus metrics; empty: none.
	MetricsAddr string `yaml:"metrics_addr"`
	// LogFormat is the daemon's log format: text or json.
	LogFormat string `yaml:"log_format"`
	// LogLevel is the daemon's log level: debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
}

// Defaults used when nothing else sets a value.
const (
	DefaultMaxFileBytes = 8 << 20
	DefaultLockTimeout  = 10 * time.Second
	DefaultMineInterval = 3 * time.Minute
)

// Env names the environment variables read by ApplyEnv, by config key.
var Env = map[string]string{
	"palace":         "MEMMINER_PALACE_PATH",
	"hive":           "MEMMINER_HIVE",
	"agents":         "MEMMINER_AGENTS",
	"model":          "MEMMINER_EMBEDDING_MODEL",
	"enabled":        "MEMMINER_ENABLED",
	"max_file_bytes": "MEMMINER_MAX_FILE_BYTES",
	"lock_timeout":   "MEMMINER_LOCK_TIMEOUT",
	"mine_interval":  "MEMMINER_MINE_INTERVAL",
	"model_cache":    "MEMMINER_MODEL_CACHE",

	"syncthing":         "MEMMINER_SYNCTHING",
	"syncthing_url":     "MEMMINER_SYNCTHING_URL",
	"syncthing_api_key": "MEMMINER_SYNCTHING_API_KEY",
	"on_conflict":       "MEMMINER_ON_CONFLICT",
	"conflict_webhook":  "MEMMINER_CONFLICT_WEBHOOK",
	"metrics_addr":      "MEMMINER_METRICS_ADDR",
	"log_format":        "MEMMINER_LOG_FORMAT",
	"log_level":         "MEMMINER_LOG_LEVEL",
}

// Default returns the built-in settings, with paths under the XDG
// directories read through getenv.
func Default(getenv func(string) string, defaultModel string) Config {
	return Config{
		Palace:       filepath.Join(xdgDir(getenv, "XDG_DATA_HOME", ".local/share"), "memminer", "palace"),
		Model:        defaultModel,
		Enabled:      true,
		Syncthing:    true,
		LogFormat:    "text",
		LogLevel:     "info",
		MaxFileBytes: DefaultMaxFileBytes,
		LockTimeout:  DefaultLockTimeout,
		MineInterval: DefaultMineInterval,
		ModelCache:   filepath.Join(xdgDir(getenv, "XDG_CACHE_HOME", ".cache"), "memminer", "models"),
	}
}

// DefaultFile is the config file read when none is named.
func DefaultFile(getenv func(string) string) string {
	return filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", ".config"), "memminer", "config.yml")
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
		n := doc[k]
		if _, known := Env[k]; !known {
			return fmt.Errorf("config %s: line %d: %w", path, n.Line, unknownSetting(k))
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue // `key: ~` or `key:` sets nothing
		}
		if k == "agents" && n.Kind == yaml.SequenceNode {
			if err := c.setAgentList(path, n); err != nil {
				return err
			}
			continue
		}
		if n.Kind != yaml.ScalarNode {
			want := "a single value"
			if k == "agents" {
				want = "a list of glob patterns, or one string of them separated by commas"
			}
			return fmt.Errorf("config %s: line %d: %s: want %s", path, n.Line, k, want)
		}
		// Keys and values go through the same parser as the environment.
		if err := c.Set(k, n.Value); err != nil {
			return fmt.Errorf("config %s: line %d: %w", path, n.Line, err)
		}
	}
	return nil
}

// setAgentList sets Agents from a YAML list of patterns, naming the line
// of the first bad one.
func (c *Config) setAgentList(path string, n yaml.Node) error {
	patterns := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode {
			return fmt.Errorf("config %s: line %d: agents: want a list of glob patterns, one per item", path, item.Line)
		}
		if item.Tag == "!!null" {
			continue
		}
		p := strings.TrimSpace(item.Value)
		if err := checkAgentPattern(p); err != nil {
			return fmt.Errorf("config %s: line %d: %w", path, item.Line, err)
		}
		patterns = append(patterns, p)
	}
	c.Agents = patterns
	return nil
}

func checkAgentPattern(p string) error {
	if err := agentglob.Check(p); err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	return nil
}

// ApplyEnv overlays the MEMMINER_* environment variables onto c.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	for key, name := range Env {
		v := getenv(name)
		if v == "" {
			continue
		}
		if err := c.Set(key, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Set assigns one setting by its config key from text, as given in an
// environment variable. A list setting (agents) takes its items
// separated by commas.
func (c *Config) Set(key, v string) error {
	switch key {
	case "palace":
		c.Palace = expandHome(v)
	case "hive":
		c.Hive = expandHome(v)
	case "agents":
		// Patterns separated by commas; empty items (a trailing comma)
		// and nothing at all mean none.
		var patterns []string
		if strings.TrimSpace(v) != "" {
			for _, p := range strings.Split(v, ",") {
				p = strings.TrimSpace(p)
				if p == "" {
					continue
				}
				if err := checkAgentPattern(p); err != nil {
					return err
				}
				patterns = append(patterns, p)
			}
		}
		c.Agents = patterns
	case "model_cache":
		c.ModelCache = expandHome(v)
	case "model":
		c.Model = v
	case "syncthing_url":
		c.SyncthingURL = v
	case "syncthing_api_key":
		c.SyncthingAPIKey = v
	case "on_conflict":
		c.OnConflict = v
	case "conflict_webhook":
		c.ConflictWebhook = v
	case "metrics_addr":
		c.MetricsAddr = v
	case "log_format":
		c.LogFormat = v
	case "log_level":
		c.LogLevel = v
	case "enabled", "syncthing":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", key, v)
		}
		if key == "enabled" {
			c.Enabled = b
		} else {
			c.Syncthing = b
		}
	case "max_file_bytes":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("max_file_bytes: %q is not a whole number of bytes", v)
		}
		c.MaxFileBytes = n
	case "lock_timeout", "mine_interval":
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not a duration like 30s or 3m", key, v)
		}
		if key == "lock_timeout" {
			c.LockTimeout = d
		} else {
			c.MineInterval = d
		}
	default:
		return unknownSetting(key)
	}
	return nil
}

func unknownSetting(key string) error {
	known := make([]string, 0, len(Env))
	for k := range Env {
		known = append(known, k)
	}
	sort.Strings(known)
	return fmt.Errorf("unknown setting %q (known: %s)", key, strings.Join(known, ", "))
}

// Validate reports the first setting a person has to fix.
func (c *Config) Validate() error {
	switch {
	case c.Palace == "":
		return errors.New("palace: no palace directory set (use --palace or MEMMINER_PALACE_PATH)")
	case c.MaxFileBytes <= 0:
		return fmt.Errorf("max_file_bytes: must be positive, got %d", c.MaxFileBytes)
	case c.LockTimeout < 0:
		return fmt.Errorf("lock_timeout: must not be negative, got %s", c.LockTimeout)
	case c.MineInterval < time.Second:
		return fmt.Errorf("mine_interval: must be at least 1s, got %s", c.MineInterval)
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
