package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestAddToFile(t *testing.T) {
	values := map[string]string{"hive": "/srv/hive", "palace": "/srv/palace"}
	tests := []struct {
		name    string
		file    *string // nil: no file
		want    string
		added   []string
		wantErr error
	}{
		{name: "no file", want: "hive: /srv/hive\npalace: /srv/palace\n", added: []string{"hive", "palace"}},
		{name: "comments and no final newline kept", file: ptr("# mine\nmodel: lexical  # fast"), want: "# mine\nmodel: lexical  # fast\nhive: /srv/hive\npalace: /srv/palace\n", added: []string{"hive", "palace"}},
		{name: "one already set", file: ptr("palace: /srv/palace\n"), want: "palace: /srv/palace\nhive: /srv/hive\n", added: []string{"hive"}},
		{name: "all already set", file: ptr("hive: /srv/hive/\npalace: /srv/palace\n"), want: "hive: /srv/hive/\npalace: /srv/palace\n"},
		{name: "empty value counts as unset", file: ptr("hive:\n"), want: "hive:\nhive: /srv/hive\npalace: /srv/palace\n", added: []string{"hive", "palace"}},
		{name: "another hive refused", file: ptr("hive: /home/ops/hive\n"), want: "hive: /home/ops/hive\n", wantErr: ErrOtherValue},
		{name: "unknown key refused", file: ptr("hiev: /srv/hive\n"), want: "hiev: /srv/hive\n", wantErr: ErrUnknownSetting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memminer", "config.yml")
			if tt.file != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(*tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			added, err := AddToFile(path, values)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(added, tt.added) {
				t.Errorf("added %q, want %q", added, tt.added)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file =\n%q\nwant\n%q", got, tt.want)
			}
			var c Config
			if err := c.LoadFile(path, true); err == nil && tt.wantErr == nil && (c.Hive == "" || c.Palace != "/srv/palace") {
				t.Errorf("loaded back: hive %q, palace %q", c.Hive, c.Palace)
			}
			if tt.file == nil {
				if info, err := os.Stat(path); err != nil || info.Mode().Perm() != FileMode {
					t.Errorf("mode of a new file: %v, %v", info.Mode(), err)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }
