package markdown

import (
	"errors"
	"testing"
)

func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		data string
		want *TextError // nil: text
	}{
		{"empty", "", nil},
		{"ascii", "- a note\n", nil},
		{"utf-8", "- Café 周三 🚀\n", nil},
		{"nul", "- a\n- b\x00c\n", &TextError{Binary: true, Offset: 7, Line: 2}},
		{"nul before bad utf-8", "\xff\x00", &TextError{Binary: true, Offset: 1, Line: 1}},
		{"latin-1", "- ok\n- caf\xe9\n", &TextError{Offset: 10, Line: 2}},
		{"truncated rune", "- ok\n\n- \xe5\x91", &TextError{Offset: 8, Line: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckText([]byte(tt.data))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckText: %v, want nil", err)
				}
				return
			}
			var te *TextError
			if !errors.As(err, &te) {
				t.Fatalf("CheckText: %v, want a *TextError", err)
			}
			if *te != *tt.want {
				t.Errorf("CheckText: %+v, want %+v", *te, *tt.want)
			}
			if te.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}
