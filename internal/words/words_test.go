package words

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Use electron-vite, db-2 and max_client_conn.", []string{"use", "electron-vite", "db-2", "and", "max_client_conn"}},
		{"Deploy v1.2 to build-04's disk.", []string{"deploy", "v1.2", "to", "build-04", "disk"}},
		{"The agent’s note; don't DROP it", []string{"the", "agent", "note", "don't", "drop", "it"}},
		{"café naïve Straße", []string{"café", "naïve", "straße"}},
		{"東京駅の改札で待つ", []string{"東", "京", "駅", "の", "改", "札", "で", "待", "つ"}},
		{"see 東京 station", []string{"see", "東", "京", "station"}},
		{"--flag -- _x_ ..", []string{"flag", "x"}},
		{"a/b (c) [d]", []string{"a", "b", "c", "d"}},
		{"", nil},
	} {
		if got := Split(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestEachKeepsCase(t *testing.T) {
	var got []string
	Each("OOMKilled on db-2's node", func(w string) { got = append(got, w) })
	if want := []string{"OOMKilled", "on", "db-2", "node"}; !slices.Equal(got, want) {
		t.Errorf("Each = %q, want %q", got, want)
	}
}

func TestParts(t *testing.T) {
	for _, tt := range []struct {
		word string
		want []string
	}{
		{"electron-vite", []string{"electron", "vite"}},
		{"max_client_conn", []string{"max", "client", "conn"}},
		{"don't", []string{"don"}},
		{"rock'n'roll", []string{"rock", "n", "roll"}},
		{"postgres", []string{"postgres"}},
	} {
		if got := Parts(tt.word); !slices.Equal(got, tt.want) {
			t.Errorf("Parts(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestTerm(t *testing.T) {
	for _, tt := range []struct{ word, want string }{
		{"deploys", "deploy"},
		{"deployed", "deploy"},
		{"payments", "payment"},
		{"db-2", "db-2"},
		{"8080", "8080"},
		{"ci", "ci"},
		{"東", "東"},
	} {
		if got := Term(tt.word); got != tt.want {
			t.Errorf("Term(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if !IsStopword("the") || IsStopword("postgres") {
		t.Error("stopwords: want the, not postgres")
	}
}
