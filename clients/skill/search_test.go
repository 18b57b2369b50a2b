package skill

import (
	"slices"
	"testing"
)

// TestSearch: the published skills whose name and description hold
// enough of the query's terms, best first; never a proposed or a
// deprecated one.
func TestSearch(t *testing.T) {
	h := t.TempDir()
	publish := func(name, desc string) {
		t.Helper()
		if _, err := Propose(h, name, skillMD(name, desc), "eng"); err != nil {
			t.Fatal(err)
		}
		if _, err := Approve(h, name, "ann"); err != nil {
			t.Fatal(err)
		}
	}
	publish("failover-drill", "Run the quarterly db-2 failover drill step by step.")
	publish("release-notes", "Write the release notes of a version from its merged pull requests.")
	publish("old-deploy", "Deploy the API by hand, the old way.")
	if _, err := Deprecate(h, "old-deploy", "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := Propose(h, "new-deploy", skillMD("new-deploy", "Deploy the API with the pipeline."), "eng"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		min   float64
		limit int
		want  []string
	}{
		{"how do we run the failover drill?", 0.22, 5, []string{"failover-drill"}},
		{"db-2 failover", 0.22, 5, []string{"failover-drill"}},
		{"drills", 0.22, 5, []string{"failover-drill"}},                                      // stemmed as notes are
		{"release the failover notes", 0.22, 5, []string{"release-notes", "failover-drill"}}, // best first
		{"release the failover notes", 0.22, 1, []string{"release-notes"}},
		{"release the failover notes", 0.5, 5, []string{"release-notes"}},
		{"deploy the API", 0, 5, nil}, // deprecated and proposed are not offered
		{"the", 0, 5, nil},            // stopwords alone match nothing
		{"kubernetes upgrade", 0, 5, nil},
	}
	for _, tt := range tests {
		got, err := Search(h, tt.query, tt.min, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range got {
			names = append(names, m.Name)
			if m.State != Published || m.Source != "skills/published/"+m.Name+"/SKILL.md" || m.Relevance <= 0 || m.Relevance > 1 {
				t.Errorf("%q: match %+v", tt.query, m)
			}
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("Search(%q, %v, %d) = %v, want %v", tt.query, tt.min, tt.limit, names, tt.want)
		}
	}
}
