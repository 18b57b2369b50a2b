package conflicts

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "notify", want: []string{"notify"}},
		{in: "  notify-send   a\tb  ", want: []string{"notify-send", "a", "b"}},
		{in: `notify-send "memory conflict" --urgency=critical`, want: []string{"notify-send", "memory conflict", "--urgency=critical"}},
		{in: `sh -c 'echo "$MEMMINER_CONFLICT_PATH"'`, want: []string{"sh", "-c", `echo "$MEMMINER_CONFLICT_PATH"`}},
		{in: `echo $(touch) ~ * $HOME`, want: []string{"echo", "$(touch)", "~", "*", "$HOME"}},
		{in: `echo "a\"b" "c\d" 'e\f'`, want: []string{"echo", `a"b`, `c\d`, `e\f`}},
		{in: `a\ b c\\d`, want: []string{"a b", `c\d`}},
		{in: `x "" ''`, want: []string{"x", "", ""}},
		{in: `a"b"'c'`, want: []string{"abc"}},
		{in: "", wantErr: true},
		{in: "   ", wantErr: true},
		{in: `echo "open`, wantErr: true},
		{in: `echo 'open`, wantErr: true},
		{in: `echo \`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("SplitCommand(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
