package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/clients/preaction"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/agentglob"
	"github.com/memminer/memminer/memory/govern"
)

// Defaults used when nothing else sets a value; the table's Default texts
// are made from them, so each is written once.
const (
	DefaultMaxFileBytes = 8 << 20
	DefaultLockTimeout  = 10 * time.Second
	DefaultMineInterval = 3 * time.Minute
	DefaultMaxNoteBytes = 4 << 10
)

// settings is the table every setting is declared in, once. The order is
// the order of the documentation's table.
var settings = []Setting{
	{Key: "palace", Env: "MEMMINER_PALACE_PATH", Flag: "palace", Default: "$XDG_DATA_HOME/memminer/palace", Help: "palace directory", Required: true, kind: pathKind(func(c *Config) *string { return &c.Palace })},
	{Key: "model", Env: "MEMMINER_EMBEDDING_MODEL", Flag: "model", Default: "use-lite", Help: "embedding model: use-lite (built in), lexical, ollama:<model> or openai:<model>", kind: textKind(func(c *Config) *string { return &c.Model })},
	{Key: "hive", Env: "MEMMINER_HIVE", Flag: "hive", Help: "hive directory: holds agents/<id>/memory.md and the directories the agents globs match", kind: pathKind(func(c *Config) *string { return &c.Hive })},
	{Key: "agents", Env: "MEMMINER_AGENTS", Help: "globs of more agent directories, relative to the hive, such as bots/* (a list, or separated by commas); none: only agents/<id>/", kind: listKind(func(c *Config) *[]string { return &c.Agents }, "glob patterns", agentglob.Check)},
	{Key: "mine_interval", Env: "MEMMINER_MINE_INTERVAL", Flag: "mine-interval", Default: durationText(DefaultMineInterval), Help: "period of the daemon's mine loop, which re-mines files whose mtime or size changed (at least 1s)", kind: durationKind(func(c *Config) *time.Duration { return &c.MineInterval }, time.Second)},
	{Key: "enabled", Env: "MEMMINER_ENABLED", Default: "true", Help: "false turns memminer off without uninstalling it: mine and the daemon do nothing", kind: boolKind(func(c *Config) *bool { return &c.Enabled })},
	{Key: "max_file_bytes", Env: "MEMMINER_MAX_FILE_BYTES", Default: strconv.Itoa(DefaultMaxFileBytes), Help: "largest markdown file mined, in bytes; larger ones are skipped with a warning", kind: countKind(func(c *Config) *int64 { return &c.MaxFileBytes }, 1)},
	{Key: "lock_timeout", Env: "MEMMINER_LOCK_TIMEOUT", Default: durationText(DefaultLockTimeout), Help: "how long a writer waits for another writer's palace lock", kind: durationKind(func(c *Config) *time.Duration { return &c.LockTimeout }, 0)},
	{Key: "stale_after", Env: "MEMMINER_STALE_AFTER", Default: "90d", Help: "how long a note stays fresh before search and wake-up mark it stale: 90d, 2w, 36h or never; a file's frontmatter stale_after wins", kind: ageKind(func(c *Config) *time.Duration { return &c.StaleAfter })},
	{Key: "wing", Env: "MEMMINER_WING", Help: "the agent's own wing, which remember writes to and protocol fills in; a harness sets it per agent", kind: textKind(func(c *Config) *string { return &c.Wing })},
	{Key: "machine", Env: "MEMMINER_MACHINE", Help: "this machine's name in the memory files remember writes, agents/<id>/memory.<machine>.md; unique per machine sharing the hive; unset: the host name", kind: machineKind(func(c *Config) *string { return &c.Machine })},
	{Key: "max_note_bytes", Env: "MEMMINER_MAX_NOTE_BYTES", Default: strconv.Itoa(DefaultMaxNoteBytes), Help: "longest note remember takes, in bytes", kind: countKind(func(c *Config) *int64 { return &c.MaxNoteBytes }, 1)},
	{Key: "pre_action", Env: "MEMMINER_PRE_ACTION", Help: "regular expressions of the high-risk shell commands the pre-action hook logs (a list, or separated by commas); none: rm -rf, git push --force, git reset --hard, DROP TABLE, kubectl delete, terraform apply|destroy, helm uninstall, … (docs/pre-action.md)", kind: listKind(func(c *Config) *[]string { return &c.PreAction }, "regular expressions", preaction.Check)},
	{Key: "pre_action_block", Env: "MEMMINER_PRE_ACTION_BLOCK", Default: "false", Help: "the pre-action hook asks the client to confirm a high-risk command instead of only logging it", kind: boolKind(func(c *Config) *bool { return &c.PreActionBlock })},
	{Key: "domains", Env: "MEMMINER_DOMAINS", Help: "domains of wings, WING=DOMAIN (a list, or separated by commas); they win over a wing's frontmatter domain:; a wing with neither is global, seen by every domain", kind: listKind(func(c *Config) *[]string { return &c.Domains }, "WING=DOMAIN pairs", checkDomainAssignment)},
	{Key: "capture_ttl", Env: "MEMMINER_CAPTURE_TTL", Default: "90d", Help: "how long a low-risk directive memminer capture takes from a session holds before it is stale until reviewed (its review date): 90d, 2w, 36h or never", kind: ageKind(func(c *Config) *time.Duration { return &c.CaptureTTL })},
	{Key: "capture_ask_after", Env: "MEMMINER_CAPTURE_ASK_AFTER", Default: "10", Help: "tool calls that make a session's work substantial: the Stop hook then asks the agent, once per session, to record what it learned unless it remembered something; 0: never", kind: countKind(func(c *Config) *int64 { return &c.CaptureAskAfter }, 0)},
	{Key: "index", Env: "MEMMINER_INDEX", Flag: "index", Default: "false", Help: "the daemon keeps HIVE/INDEX.md, the hive's catalog, current (rewritten only when it changes)", kind: boolKind(func(c *Config) *bool { return &c.Index })},
	{Key: "model_cache", Env: "MEMMINER_MODEL_CACHE", Default: "$XDG_CACHE_HOME/memminer/models", Help: "directory downloaded models are kept in", kind: pathKind(func(c *Config) *string { return &c.ModelCache })},
	{Key: "syncthing", Env: "MEMMINER_SYNCTHING", Flag: "no-syncthing", FlagNegates: true, Default: "true", Help: "follow the local Syncthing's events for conflict copies when it answers", FlagHelp: "do not follow Syncthing's events; find conflict copies by scanning the hive at every mine tick only", kind: boolKind(func(c *Config) *bool { return &c.Syncthing })},
	{Key: "syncthing_url", Env: "MEMMINER_SYNCTHING_URL", Flag: "syncthing-url", Help: "Syncthing's GUI/REST address, followed for conflict copies; unset: the address in Syncthing's config.xml, else http://127.0.0.1:8384", kind: textKind(func(c *Config) *string { return &c.SyncthingURL })},
	{Key: "syncthing_api_key", Env: "MEMMINER_SYNCTHING_API_KEY", Flag: "syncthing-api-key", Help: "Syncthing's API key; unset: $STGUIAPIKEY, else read from Syncthing's config.xml", kind: textKind(func(c *Config) *string { return &c.SyncthingAPIKey })},
	{Key: "on_conflict", Env: "MEMMINER_ON_CONFLICT", Flag: "on-conflict", Help: "run this command for every new conflict, without a shell; details in MEMMINER_CONFLICT_* variables", kind: textKind(func(c *Config) *string { return &c.OnConflict })},
	{Key: "conflict_webhook", Env: "MEMMINER_CONFLICT_WEBHOOK", Flag: "conflict-webhook", Help: "POST every new conflict as JSON to this http(s) URL, retried with backoff", kind: textKind(func(c *Config) *string { return &c.ConflictWebhook })},
	{Key: "auto_merge", Env: "MEMMINER_AUTO_MERGE", Flag: "auto-merge", Default: "false", Help: "merge conflict copies that merge cleanly as soon as they are found (see conflicts merge), and alert \"merged\"", kind: boolKind(func(c *Config) *bool { return &c.AutoMerge })},
	{Key: "metrics_addr", Env: "MEMMINER_METRICS_ADDR", Flag: "metrics-addr", Help: "serve Prometheus metrics on this host:port, e.g. 127.0.0.1:9464; loopback only unless --metrics-allow-remote", kind: textKind(func(c *Config) *string { return &c.MetricsAddr })},
	{Key: "metrics_token", Env: "MEMMINER_METRICS_TOKEN", Flag: "metrics-token", Default: "false", Help: "scrapes of metrics_addr must send Authorization: Bearer TOKEN (memminer mcp token prints it); the control socket serves /metrics to you alone either way", kind: boolKind(func(c *Config) *bool { return &c.MetricsToken })},
	{Key: "log_format", Env: "MEMMINER_LOG_FORMAT", Flag: "log-format", Default: "text", Help: "the daemon's log format: text or json", kind: choiceKind(func(c *Config) *string { return &c.LogFormat }, "text", "json")},
	{Key: "log_level", Env: "MEMMINER_LOG_LEVEL", Flag: "log-level", Default: "info", Help: "the daemon's log level: debug, info, warn or error", kind: choiceKind(func(c *Config) *string { return &c.LogLevel }, "debug", "info", "warn", "error")},
}

// checkDomainAssignment checks one entry of the domains setting.
func checkDomainAssignment(s string) error {
	_, _, err := hive.ParseDomainAssignment(s)
	return err
}

// durationText writes d as people do: 3m rather than 3m0s.
func durationText(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// Setting declares one setting: where it is read from, its default, how
// its text is parsed and what it means.
type Setting struct {
	// Key is the setting's key in the config file.
	Key string
	// Env is the environment variable that sets it; an empty value is unset.
	Env string
	// Flag is the command-line flag that sets it, without dashes; empty
	// when there is none. Commands choose which of them they take.
	Flag string
	// FlagNegates says the flag sets the opposite of its value, as
	// --no-syncthing sets syncthing to false.
	FlagNegates bool
	// Default is the value used when nothing sets one, as text the
	// setting parses ($XDG_DATA_HOME and $XDG_CACHE_HOME are expanded);
	// empty means none.
	Default string
	// Help says what the setting is, in one line.
	Help string
	// FlagHelp is a negating flag's help, which says what the flag does
	// rather than what the setting is.
	FlagHelp string
	// Required settings must not end up empty.
	Required bool

	kind kind
}

// kind is how a setting's text becomes a Config field.
type kind struct {
	// typeName is the flag's type as pflag names it: string, bool, duration, int.
	typeName string
	set      func(c *Config, v string) error
	// setList sets a list setting from items (a YAML list); nil for others.
	setList func(c *Config, items []string) error
	isZero  func(c *Config) bool
	// items names a list's items in errors, such as "glob patterns".
	items string
}

// IsBool says the setting is true or false, so its flag takes no value.
func (s Setting) IsBool() bool { return s.kind.typeName == "bool" }

// IsList says the setting is a list, which the config file may give as a
// YAML list and the environment as items separated by commas.
func (s Setting) IsList() bool { return s.kind.setList != nil }

// TypeName names the setting's type as flag help shows it: string, bool,
// duration or int.
func (s Setting) TypeName() string { return s.kind.typeName }

// Check reports whether v is a value the setting accepts, as an error
// naming the setting.
func (s Setting) Check(v string) error {
	var c Config
	return s.kind.set(&c, v)
}

// Settings returns the table of every setting, in documentation order.
func Settings() []Setting { return append([]Setting(nil), settings...) }

// Lookup returns the setting with the config key key.
func Lookup(key string) (Setting, bool) {
	for _, s := range settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

func textKind(field func(*Config) *string) kind {
	return kind{
		typeName: "string",
		set:      func(c *Config, v string) error { *field(c) = v; return nil },
		isZero:   func(c *Config) bool { return *field(c) == "" },
	}
}

// machineKind is a machine name (hive.NormalizeMachine).
func machineKind(field func(*Config) *string) kind {
	k := textKind(field)
	k.set = func(c *Config, v string) error {
		m, err := hive.NormalizeMachine(v)
		if err != nil {
			return err
		}
		*field(c) = m
		return nil
	}
	return k
}

// pathKind is a directory or file; a leading ~ is the home directory.
// The path is cleaned, so /srv/hive/ and /srv/hive are one setting.
func pathKind(field func(*Config) *string) kind {
	k := textKind(field)
	k.set = func(c *Config, v string) error {
		if v = expandHome(v); v != "" {
			v = filepath.Clean(v)
		}
		*field(c) = v
		return nil
	}
	return k
}

// choiceKind is one of choices, in any case.
func choiceKind(field func(*Config) *string, choices ...string) kind {
	k := textKind(field)
	k.set = func(c *Config, v string) error {
		for _, ch := range choices {
			if strings.EqualFold(v, ch) {
				*field(c) = ch
				return nil
			}
		}
		return fmt.Errorf("%q is not %s", v, orList(choices))
	}
	return k
}

// orList joins "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func boolKind(field func(*Config) *bool) kind {
	return kind{
		typeName: "bool",
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*field(c) = b
			return nil
		},
		isZero: func(c *Config) bool { return !*field(c) },
	}
}

// countKind is a whole number of at least min.
func countKind(field func(*Config) *int64, min int64) kind {
	return kind{
		typeName: "int",
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", v)
			}
			if n < min {
				return fmt.Errorf("must be at least %d, got %d", min, n)
			}
			*field(c) = n
			return nil
		},
		isZero: func(c *Config) bool { return *field(c) == 0 },
	}
}

// durationKind is a duration of at least min.
func durationKind(field func(*Config) *time.Duration, min time.Duration) kind {
	return kind{
		typeName: "duration",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%q is not a duration like 30s or 3m", v)
			}
			if d < min {
				if min == 0 {
					return fmt.Errorf("must not be negative, got %s", d)
				}
				return fmt.Errorf("must be at least %s, got %s", min, d)
			}
			*field(c) = d
			return nil
		},
		isZero: func(c *Config) bool { return *field(c) == 0 },
	}
}

// ageKind is a length of time as govern.ParseAge reads it: 90d, 2w, 36h,
// or never (govern.Never).
func ageKind(field func(*Config) *time.Duration) kind {
	return kind{
		typeName: "age",
		set: func(c *Config, v string) error {
			d, err := govern.ParseAge(v)
			if err != nil {
				return err
			}
			*field(c) = d
			return nil
		},
		isZero: func(c *Config) bool { return *field(c) == 0 },
	}
}

// listKind is a list of items, each accepted by check. As text, the items
// are separated by commas; empty items (a trailing comma) and nothing at
// all mean none.
func listKind(field func(*Config) *[]string, items string, check func(string) error) kind {
	setList := func(c *Config, items []string) error {
		out := make([]string, 0, len(items))
		for _, it := range items {
			it = strings.TrimSpace(it)
			if err := check(it); err != nil {
				return err
			}
			out = append(out, it)
		}
		*field(c) = out
		return nil
	}
	return kind{
		typeName: "strings",
		set: func(c *Config, v string) error {
			var items []string
			for _, it := range strings.Split(v, ",") {
				if strings.TrimSpace(it) != "" {
					items = append(items, it)
				}
			}
			if len(items) == 0 {
				*field(c) = nil
				return nil
			}
			return setList(c, items)
		},
		setList: setList,
		isZero:  func(c *Config) bool { return len(*field(c)) == 0 },
		items:   items,
	}
}
