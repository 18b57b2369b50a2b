package handoff

import "testing"

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
