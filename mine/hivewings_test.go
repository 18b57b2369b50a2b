package mine

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestHiveWings: the wings a mine takes over from agent directories of a
// hive, named with that hive, whichever of its paths is given; none for
// markdown mined as any other, or a path that cannot be mined.
func TestHiveWings(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := filepath.Join(tmp, "hive")
	testutil.WriteFile(t, filepath.Join(h, "agents", "jim", "memory.md"), "- a\n")
	testutil.WriteFile(t, filepath.Join(h, "agents", "pam", "memory.md"), "- b\n")
	testutil.WriteFile(t, filepath.Join(tmp, "notes", "n.md"), "- c\n")
	jim, pam := HiveWing{Hive: h, Wing: "jim"}, HiveWing{Hive: h, Wing: "pam"}
	for _, tc := range []struct {
		path string
		opts Options
		want []HiveWing
	}{
		{h, Options{}, []HiveWing{jim, pam}},
		{filepath.Join(h, "agents"), Options{}, []HiveWing{jim, pam}},
		{filepath.Join(h, "agents", "jim"), Options{}, []HiveWing{jim}},
		{filepath.Join(h, "agents", "jim"), Options{Wing: "other"}, []HiveWing{{Hive: h, Wing: "other"}}},
		{filepath.Join(h, "agents", "jim"), Options{Hive: filepath.Join(tmp, "elsewhere")}, []HiveWing{jim}},
		{filepath.Join(h, "agents", "jim", "memory.md"), Options{}, nil},
		{filepath.Join(tmp, "notes"), Options{Wing: "notes"}, nil},
		{filepath.Join(tmp, "notes"), Options{}, nil},
		{filepath.Join(tmp, "missing"), Options{}, nil},
	} {
		if got := HiveWings(tc.path, tc.opts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HiveWings(%s, %+v) = %v, want %v", tc.path, tc.opts, got, tc.want)
		}
	}
}
