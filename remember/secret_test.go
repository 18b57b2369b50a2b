package remember

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/secrets/secretstest"
)

// TestSecretsNeverEnter: a note, heading or tag holding any of the ten
// kinds of credential is refused with nothing written and a message that
// names the kind, never the secret; Redact writes the rest of the note.
func TestSecretsNeverEnter(t *testing.T) {
	const existing = "# kim's memory\n\n- The stapler lives in the annex.\n"
	for _, c := range secretstest.Ten() {
		t.Run(c.Kind, func(t *testing.T) {
			f := newFixture(t, map[string]string{"agents/kim/memory.laptop.md": existing})
			for _, req := range []Request{
				{Wing: "kim", Text: c.Note},
				{Wing: "kim", Text: c.Note, Confidence: "hypothesis"},
				{Wing: "kim", Text: "The release checklist.", Heading: strings.ReplaceAll(c.Note, "\n", " ")},
				// A heading of two lines is refused for its secret,
				// never echoed as a bad heading.
				{Wing: "kim", Text: "The release checklist.", Heading: "Ops\n" + c.Note},
			} {
				_, err := f.remember(t, req)
				var se *SecretError
				if !errors.Is(err, ErrSecret) || !errors.As(err, &se) || errors.Is(err, ErrBadRequest) {
					t.Fatalf("Remember(%+v) = %v, want a *SecretError", req, err)
				}
				if se.Found[0].Kind != c.Kind || !strings.Contains(err.Error(), c.Kind) {
					t.Errorf("error %q, want kind %s", err, c.Kind)
				}
				if c.In(err.Error()) {
					t.Errorf("the error shows the secret: %q", err)
				}
				if got := f.read(t, "agents/kim/memory.laptop.md"); got != existing {
					t.Errorf("the memory file changed to %q", got)
				}
				if _, err := os.Stat(filepath.Join(f.hive, "agents/kim/inbox.md")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the inbox was written: %v", err)
				}
			}

			res, err := f.remember(t, Request{Wing: "kim", Text: c.Note, Redact: true})
			if err != nil || !res.Added {
				t.Fatalf("Remember with Redact = %+v, %v", res, err)
			}
			got := f.read(t, "agents/kim/memory.laptop.md")
			if c.In(got) {
				t.Errorf("the redacted note holds the secret: %q", got)
			}
			for _, want := range []string{existing, "[redacted: " + c.Kind + "]", c.Before, c.After} {
				if !strings.Contains(got, want) {
					t.Errorf("the file %q lacks %q", got, want)
				}
			}
		})
	}
}

func TestSecretInATagIsRefusedEvenRedacted(t *testing.T) {
	f := newFixture(t, nil)
	gh := secretstest.Ten()[1].Secrets[0]
	_, err := f.remember(t, Request{Wing: "kim", Text: "The release checklist.", Tags: []string{gh}, Redact: true})
	if !errors.Is(err, ErrSecret) || strings.Contains(err.Error(), gh) {
		t.Errorf("err = %v, want ErrSecret without the secret", err)
	}
}
