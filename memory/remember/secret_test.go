package remember

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/secrets/secretstest"
	"github.com/memminer/memminer/mine"
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
				// gitleaks' allow marker is a person's word on a file
				// they reviewed, not an agent's to write.
				{Wing: "kim", Text: c.Note + " (gitleaks:allow)"},
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

// TestSupersedeANoteHoldingASecret: a hand-written note whose secret the
// palace holds hidden can still be superseded by its id.
func TestSupersedeANoteHoldingASecret(t *testing.T) {
	c := secretstest.Ten()[3]
	f := newFixture(t, map[string]string{"agents/kim/memory.md": "# kim's memory\n\n- " + c.Secrets[0] + " is the Stripe key of billing.\n"})
	if _, err := mine.Mine(context.Background(), f.p, filepath.Join(f.hive, "agents/kim"), mine.Options{Hive: f.hive}); err != nil {
		t.Fatal(err)
	}
	notes := f.p.Notes("kim")
	if len(notes) != 1 || c.In(notes[0].Text) {
		t.Fatalf("notes %+v, want one with its secret hidden", notes)
	}
	res, err := f.remember(t, Request{Wing: "kim", Text: "Billing's Stripe key is in Vault at secret/billing/stripe.", Supersedes: []string{notes[0].ID}})
	if err != nil || len(res.Superseded) != 1 {
		t.Fatalf("Remember = %+v, %v; want the old note superseded", res, err)
	}
	if got := f.read(t, "agents/kim/memory.md"); !strings.Contains(got, "(superseded 2026-12-01)") {
		t.Errorf("the old note is not marked: %q", got)
	}
}
