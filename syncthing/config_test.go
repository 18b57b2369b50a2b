package syncthing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadGUIConfig(t *testing.T) {
	tests := []struct {
		file    string
		want    GUIConfig
		wantURL string
	}{
		{"config.xml", GUIConfig{Address: "127.0.0.1:8384", APIKey: "testdata-key-9f8e7d6c5b4a"}, "http://127.0.0.1:8384"},
		{"config-tls-wildcard.xml", GUIConfig{Address: "0.0.0.0:8443", APIKey: "spaced-key-0123", TLS: true}, "https://127.0.0.1:8443"},
		{"config-nokey.xml", GUIConfig{Address: "127.0.0.1:8384"}, "http://127.0.0.1:8384"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ReadGUIConfig(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ReadGUIConfig = %#v, want %#v", got, tt.want)
			}
			if u := got.URL(); u != tt.wantURL {
				t.Errorf("URL() = %q, want %q", u, tt.wantURL)
			}
			for _, s := range []string{fmt.Sprint(got), fmt.Sprintf("%+v", got), fmt.Sprintf("%#v", got)} {
				if got.APIKey != "" && strings.Contains(s, got.APIKey) {
					t.Errorf("formatted GUIConfig shows the API key: %s", s)
				}
			}
		})
	}
}

func TestGUIConfigURL(t *testing.T) {
	tests := []struct {
		in   GUIConfig
		want string
	}{
		{GUIConfig{}, DefaultURL},
		{GUIConfig{Address: "[::]:8384"}, "http://[::1]:8384"},
		{GUIConfig{Address: ":8384"}, "http://127.0.0.1:8384"},
		{GUIConfig{Address: "localhost:9000", TLS: true}, "https://localhost:9000"},
		{GUIConfig{Address: "unix:///run/st.sock"}, "unix:///run/st.sock"},
	}
	for _, tt := range tests {
		if got := tt.in.URL(); got != tt.want {
			t.Errorf("%+v.URL() = %q, want %q", tt.in.Address, got, tt.want)
		}
	}
}

func TestAPIKeyFromConfig(t *testing.T) {
	key, err := APIKeyFromConfig(filepath.Join("testdata", "config.xml"))
	if err != nil || key != "testdata-key-9f8e7d6c5b4a" {
		t.Fatalf("APIKeyFromConfig = %q, %v", key, err)
	}

	if _, err := APIKeyFromConfig(filepath.Join("testdata", "config-nokey.xml")); err == nil || !strings.Contains(err.Error(), "no <gui><apikey>") {
		t.Errorf("missing key: err = %v", err)
	}
	if _, err := APIKeyFromConfig(filepath.Join(t.TempDir(), "absent.xml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: err = %v, want ErrNotExist", err)
	}

	// A broken file whose text holds a key: the error must not repeat it.
	broken := filepath.Join(t.TempDir(), "config.xml")
	const secret = "secret-in-broken-file-42"
	if err := os.WriteFile(broken, []byte("<configuration><gui><apikey>"+secret+"</apikey></gui"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = APIKeyFromConfig(broken)
	if err == nil {
		t.Fatal("broken XML: no error")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the key: %v", err)
	}
}

func TestDefaultConfigPaths(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	j := filepath.Join
	tests := []struct {
		name string
		goos string
		env  map[string]string
		home string
		want []string
	}{
		{"linux defaults", "linux", nil, "/h",
			[]string{j("/h", ".local/state/syncthing/config.xml"), j("/h", ".config/syncthing/config.xml")}},
		{"linux XDG", "linux", map[string]string{"XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c"}, "/h",
			[]string{j("/s", "syncthing/config.xml"), j("/h", ".local/state/syncthing/config.xml"),
				j("/c", "syncthing/config.xml"), j("/h", ".config/syncthing/config.xml")}},
		{"XDG equal to default deduplicated", "freebsd", map[string]string{"XDG_CONFIG_HOME": j("/h", ".config")}, "/h",
			[]string{j("/h", ".local/state/syncthing/config.xml"), j("/h", ".config/syncthing/config.xml")}},
		{"STHOMEDIR first", "linux", map[string]string{"STHOMEDIR": "/st"}, "/h",
			[]string{j("/st", "config.xml"), j("/h", ".local/state/syncthing/config.xml"), j("/h", ".config/syncthing/config.xml")}},
		{"macOS", "darwin", nil, "/Users/u",
			[]string{j("/Users/u", "Library/Application Support/Syncthing/config.xml")}},
		{"windows", "windows", map[string]string{"LOCALAPPDATA": "/appdata"}, "/u",
			[]string{j("/appdata", "Syncthing/config.xml"), j("/u", "AppData/Local/Syncthing/config.xml")}},
		{"no home", "linux", nil, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := defaultConfigPaths(tt.goos, env(tt.env), tt.home)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("defaultConfigPaths =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
	if len(DefaultConfigPaths()) == 0 && os.Getenv("HOME") != "" {
		t.Error("DefaultConfigPaths returned nothing on this system")
	}
}

func TestFindConfig(t *testing.T) {
	dir := t.TempDir()
	absent := filepath.Join(dir, "a", "config.xml")
	present := filepath.Join(dir, "b", "config.xml")
	data, err := os.ReadFile(filepath.Join("testdata", "config.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(present), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(present, data, 0o600); err != nil {
		t.Fatal(err)
	}
	path, gui, err := FindConfig(absent, present)
	if err != nil || path != present || gui.APIKey != "testdata-key-9f8e7d6c5b4a" {
		t.Fatalf("FindConfig = %q, %v, %v", path, gui, err)
	}
	if _, _, err := FindConfig(absent); !errors.Is(err, ErrNoConfig) {
		t.Errorf("FindConfig(absent) err = %v, want ErrNoConfig", err)
	}
}

// TestConfigPathsFromGetenv: every path comes from the environment given,
// HOME included, $STHOMEDIR first.
func TestConfigPathsFromGetenv(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "STHOMEDIR": "/st", "XDG_CONFIG_HOME": "/cfg"}
	got := ConfigPaths(func(k string) string { return env[k] })
	if len(got) == 0 || got[0] != filepath.Join("/st", ConfigFileName) {
		t.Fatalf("paths = %v, want $STHOMEDIR's first", got)
	}
	for _, p := range got {
		if !strings.HasPrefix(p, "/st") && !strings.HasPrefix(p, "/home/u") && !strings.HasPrefix(p, "/cfg") {
			t.Errorf("path %s is not under the given environment", p)
		}
	}
}
