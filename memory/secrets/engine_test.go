package secrets

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// gitleaksConfig is gitleaks' default configuration extended by
// extra.toml's rules as gitleaks itself loads it (Translate), to hold
// the engine to gitleaks' detector. It is loaded once: gitleaks
// counts the extensions it loads in a global, and loads the default no
// more once it has twice.
var gitleaksConfig = sync.OnceValues(func() (config.Config, error) {
	viper.SetConfigType("toml")
	if err := viper.ReadConfig(strings.NewReader(extraRules)); err != nil {
		return config.Config{}, err
	}
	var vc config.ViperConfig
	if err := viper.Unmarshal(&vc); err != nil {
		return config.Config{}, err
	}
	return vc.Translate()
})

// TestEveryRuleCompiles: the rules are compiled when first needed; each
// one must compile, with its allowlists.
func TestEveryRuleCompiles(t *testing.T) {
	if len(rules().rules) < 200 {
		t.Fatalf("%d rules, want gitleaks' 200 and more", len(rules().rules))
	}
	for _, r := range rules().rules {
		if c := r.compiled(); c.regex == nil {
			t.Errorf("rule %s has no regexp", r.id)
		}
	}
}

// TestEngineIsGitleaksDetector: on the ten kinds, in prose and as code
// would hold them, and on ordinary notes, the engine finds what gitleaks'
// own detector finds with the same rules.
func TestEngineIsGitleaksDetector(t *testing.T) {
	cfg, err := gitleaksConfig()
	if err != nil {
		t.Fatal(err)
	}
	d := detect.NewDetector(cfg)
	var texts []string
	for _, c := range secretstest.Ten() {
		texts = append(texts, c.Note, strings.Join(c.Secrets, "\n"), "export TOKEN="+c.Secrets[0]+"\n", `{"key": "`+c.Secrets[0]+`"} // gitleaks:allow`)
	}
	texts = append(texts,
		"Rotate the API key every 90 days.",
		"password = ${DB_PASSWORD}",
		"api_key: <your key here>",
		"secret: abcdefghijklmnopqrstuvwxyz",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"The deploy used commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f8091a2b3c.",
	)
	key := func(kind, secret string) string { return kind + " " + secret }
	for _, text := range texts {
		var want, got []string
		for _, f := range d.DetectString(text) {
			want = append(want, key(f.RuleID, f.Secret))
		}
		for _, f := range rules().find(text) {
			got = append(got, key(f.kind, f.secret))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q:\n engine   %q\n gitleaks %q", text, got, want)
		}
	}
}
