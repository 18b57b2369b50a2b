package handoff

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		text string
		want Note
		ok   bool
	}{
		{"handoff ho-0a1b2c3d to pam: finish the\n  db-2 failover runbook (added 2026-12-04)", Note{"ho-0a1b2c3d", "pam", "finish the db-2 failover runbook"}, true},
		{"- Handoff ho-0A1B2C3D to Pam: x", Note{"ho-0a1b2c3d", "pam", "x"}, true},
		{"we discussed a handoff ho-0a1b2c3d to pam: x", Note{}, false},
		{"handoff ho-123 to pam: x", Note{}, false},
		{"accepted handoff ho-0a1b2c3d from dwight: x", Note{}, false},
	}
	for _, c := range cases {
		got, ok := Parse(c.text)
		if ok != c.ok || got != c.want {
			t.Errorf("Parse(%q) = %+v, %t; want %+v, %t", c.text, got, ok, c.want, c.ok)
		}
	}
	h := Text(NewRef(), "pam", "take over\nthe release")
	if n, ok := Parse(h); !ok || n.To != "pam" || n.Summary != "take over the release" || !ValidRef(n.Ref) {
		t.Errorf("Parse(Text) = %+v, %t", n, ok)
	}
	a := AcceptText("ho-0a1b2c3d", "dwight", "take over the release")
	if ref, ok := ParseAccept(a); !ok || ref != "ho-0a1b2c3d" {
		t.Errorf("ParseAccept(%q) = %q, %t", a, ref, ok)
	}
	if _, ok := ParseAccept(h); ok {
		t.Error("a handoff parsed as an acceptance")
	}
}

func TestOwner(t *testing.T) {
	claim := func(from, date, to string) Claim {
		return Claim{Note: Note{Ref: "ho-0a1b2c3d", To: to}, From: from, Date: date}
	}
	cases := []struct {
		name      string
		claims    []Claim
		from      string
		contested bool
	}{
		{"none", nil, "", false},
		{"one", []Claim{claim("dwight", "2026-10-01", "pam")}, "dwight", false},
		{"a later copy", []Claim{claim("mallory", "2026-10-02", "bob"), claim("dwight", "2026-10-01", "pam")}, "dwight", false},
		{"an undated copy", []Claim{claim("mallory", "", "pam"), claim("dwight", "2026-10-01", "pam")}, "dwight", false},
		{"twice in the sender's wing", []Claim{claim("dwight", "2026-10-01", "pam"), claim("dwight", "2026-10-01", "pam")}, "dwight", false},
		{"two wings on the first day", []Claim{claim("dwight", "2026-10-01", "pam"), claim("mallory", "2026-10-01", "pam")}, "", true},
	}
	for _, c := range cases {
		got, ok, err := Owner(c.claims)
		if errors.Is(err, ErrContested) != c.contested || got.From != c.from || ok != (c.from != "") {
			t.Errorf("%s: Owner = %+v, %v, %v; want from %q, contested %v", c.name, got, ok, err, c.from, c.contested)
		}
	}
}
