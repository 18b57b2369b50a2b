package syncthing

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ConfigFileName is the name of Syncthing's configuration file.
const ConfigFileName = "config.xml"

// ErrNoConfig reports that none of the candidate config.xml files exists.
var ErrNoConfig = errors.New("no Syncthing config.xml found")

// GUIConfig is the <gui> element of Syncthing's config.xml.
type GUIConfig struct {
	// Address is the GUI/REST listen address, such as "127.0.0.1:8384".
	Address string
	// APIKey is the REST API key. Never log it.
	APIKey string
	// TLS reports whether the GUI is served over HTTPS.
	TLS bool
}

// URL returns the base URL for [NewClient]. A wildcard listen address
// (0.0.0.0, [::] or an empty host) is replaced with the loopback address;
// an empty Address gives [DefaultURL].
func (g GUIConfig) URL() string {
	addr := strings.TrimSpace(g.Address)
	if addr == "" {
		return DefaultURL
	}
	if strings.Contains(addr, "://") {
		return addr
	}
	scheme := "http"
	if g.TLS {
		scheme = "https"
	}
	switch {
	case strings.HasPrefix(addr, "0.0.0.0:"):
		addr = "127.0.0.1" + addr[len("0.0.0.0"):]
	case strings.HasPrefix(addr, "[::]:"):
		addr = "[::1]" + addr[len("[::]"):]
	case strings.HasPrefix(addr, ":"):
		addr = "127.0.0.1" + addr
	}
	return scheme + "://" + addr
}

// String describes the GUI config without the API key.
func (g GUIConfig) String() string {
	return fmt.Sprintf("GUIConfig{Address:%q TLS:%t APIKey:[redacted]}", g.Address, g.TLS)
}

// GoString is like String.
func (g GUIConfig) GoString() string { return g.String() }

// ReadGUIConfig reads the <gui> element of the config.xml at path.
func ReadGUIConfig(path string) (GUIConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return GUIConfig{}, fmt.Errorf("read Syncthing config: %w", err)
	}
	var doc struct {
		XMLName xml.Name `xml:"configuration"`
		GUI     struct {
			TLS     string `xml:"tls,attr"`
			Address string `xml:"address"`
			APIKey  string `xml:"apikey"`
		} `xml:"gui"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		// The XML error names a line, not content, so it cannot leak the key.
		return GUIConfig{}, fmt.Errorf("parse Syncthing config %s: %w", path, err)
	}
	return GUIConfig{
		Address: strings.TrimSpace(doc.GUI.Address),
		APIKey:  strings.TrimSpace(doc.GUI.APIKey),
		TLS:     strings.EqualFold(strings.TrimSpace(doc.GUI.TLS), "true"),
	}, nil
}

// APIKeyFromConfig returns <gui><apikey> from the config.xml at path. It is
// an error for the key to be missing.
func APIKeyFromConfig(path string) (string, error) {
	g, err := ReadGUIConfig(path)
	if err != nil {
		return "", err
	}
	if g.APIKey == "" {
		return "", fmt.Errorf("syncthing config %s has no <gui><apikey>", path)
	}
	return g.APIKey, nil
}

// DefaultConfigPaths returns where Syncthing keeps config.xml on this
// system, most likely first: $STHOMEDIR and $STCONFDIR when set, then
// $XDG_STATE_HOME/syncthing, ~/.local/state/syncthing,
// $XDG_CONFIG_HOME/syncthing and ~/.config/syncthing on Unix-likes,
// ~/Library/Application Support/Syncthing on macOS, and
// %LOCALAPPDATA%\Syncthing on Windows.
func DefaultConfigPaths() []string { return ConfigPaths(os.Getenv) }

// ConfigPaths is [DefaultConfigPaths] with the environment read through
// getenv (HOME too, falling back to the user's home directory).
func ConfigPaths(getenv func(string) string) []string {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return defaultConfigPaths(runtime.GOOS, getenv, home)
}

func defaultConfigPaths(goos string, getenv func(string) string, home string) []string {
	var dirs []string
	add := func(dir string) {
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	inHome := func(elem ...string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(append([]string{home}, elem...)...)
	}
	add(getenv("STHOMEDIR"))
	add(getenv("STCONFDIR"))
	switch goos {
	case "windows":
		if d := getenv("LOCALAPPDATA"); d != "" {
			add(filepath.Join(d, "Syncthing"))
		}
		add(inHome("AppData", "Local", "Syncthing"))
	case "darwin":
		add(inHome("Library", "Application Support", "Syncthing"))
	default:
		if d := getenv("XDG_STATE_HOME"); d != "" {
			add(filepath.Join(d, "syncthing"))
		}
		add(inHome(".local", "state", "syncthing"))
		if d := getenv("XDG_CONFIG_HOME"); d != "" {
			add(filepath.Join(d, "syncthing"))
		}
		add(inHome(".config", "syncthing"))
	}
	seen := make(map[string]bool, len(dirs))
	var out []string
	for _, d := range dirs {
		p := filepath.Join(d, ConfigFileName)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// FindConfig returns the first of candidates that exists (all of
// [DefaultConfigPaths] when candidates is empty) and its <gui> settings.
// It returns an error wrapping [ErrNoConfig] when none exists.
func FindConfig(candidates ...string) (string, GUIConfig, error) {
	if len(candidates) == 0 {
		candidates = DefaultConfigPaths()
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return "", GUIConfig{}, fmt.Errorf("find Syncthing config: %w", err)
		}
		g, err := ReadGUIConfig(p)
		if err != nil {
			return "", GUIConfig{}, err
		}
		return p, g, nil
	}
	return "", GUIConfig{}, fmt.Errorf("%w (looked in %s)", ErrNoConfig, strings.Join(candidates, ", "))
}
