package merge

import (
	"strings"
	"testing"
)

func TestMergeWithAncestor(t *testing.T) {
	const base = "# A\n\n- one\n- two apples on the table\n- three\n"
	tests := []struct {
		name, ancestor, ours, theirs, want string
		review                             bool
	}{
		{"a removal the ancestor confirms is taken", base, "# A\n\n- one\n- three\n", base + "- four\n", "# A\n\n- one\n- three\n- four\n", false},
		{"ours is the ancestor: theirs wins whole", base, base, "# A\n\n- one\n- three\n", "# A\n\n- one\n- three\n", false},
		{"both changed one note", base, strings.Replace(base, "two apples", "two red apples", 1), strings.Replace(base, "two apples", "two green apples", 1), "", true},
		{"both added the file", "", "- x\n", "- y\n", "- x\n- y\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Merge(Input{Ancestor: []byte(tt.ancestor), Ours: []byte(tt.ours), Theirs: []byte(tt.theirs), Device: "d", Date: "2026-12-04", AcceptRemovals: true})
			if err != nil {
				t.Fatal(err)
			}
			if !res.ThreeWay || !res.Confirmed {
				t.Errorf("three-way %v, confirmed %v; want both", res.ThreeWay, res.Confirmed)
			}
			if res.NeedsReview != tt.review {
				t.Errorf("needs review %v, want %v: %+v", res.NeedsReview, tt.review, res.Conflicts)
			}
			if tt.want != "" && string(res.Merged) != tt.want {
				t.Errorf("merged %q, want %q", res.Merged, tt.want)
			}
		})
	}
}
