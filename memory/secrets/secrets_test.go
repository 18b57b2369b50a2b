package secrets_test

import (
	"go/build"
	mathrand "math/rand/v2"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// ordinary are operational notes full of what looks like a secret to a
// careless rule — commit SHAs, image digests, UUIDs, note ids, host names,
// ports, and the words key, token and password — and hold none.
var ordinary = []string{
	"Deployed commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f8091a2b3c to production at 14:02.",
	"Rolled back to 9b1e4c7 after the p99 latency alarm.",
	"The base image is ghcr.io/acme/api@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.",
	"Pinned node:20-alpine@sha256:2b5e4f1c0a8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1 in the Dockerfile.",
	"Tenant 123e4567-e89b-12d3-a456-426614174000 is the staging tenant.",
	"Request id 6f1c2b9e-0d4a-4c8e-9b7a-3e2f1d0c9b8a failed with 502.",
	"Note 4c0f2e8a9b7d6c5e4f3a2b1c0d9e8f7a supersedes the old runbook entry.",
	"See note a1b2c3d4e5f60718293a4b5c6d7e8f90 for the failover steps.",
	"db-1.internal:5432 is the primary; db-2.internal:5432 is the replica.",
	"Redis runs on cache-3.prod.acme.net port 6379.",
	"The API gateway listens on 127.0.0.1:8443 in the dev stack.",
	"Rotate the API key every 90 days.",
	"The password policy requires 12 characters and one digit.",
	"Tokens expire after 3600 seconds; refresh them with the refresh endpoint.",
	"The secret store is Vault at vault.internal:8200; ask ops for access.",
	"Credentials for the staging database live in 1Password, vault Ops.",
	"The API key for the weather service is in the team's password manager.",
	"Use the deploy key from the vault, never a personal one.",
	"auth_token is read from the AUTH_TOKEN environment variable at start-up.",
	"Set password=${DB_PASSWORD} in the compose file, never the value.",
	"api_key: <your key here> is what the sample config says.",
	"The connection string is postgres://app:${PGPASSWORD}@db-1.internal:5432/app.",
	"Connect with postgres://report@db-1.internal:5432/reports; the password comes from .pgpass.",
	"The docs use postgres://user:password@localhost:5432/db as the example.",
	"Git tag v2.14.3 points at 0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e.",
	"Merge request !482 changes the retry backoff to 250ms.",
	"The build cache key is go-mod-${{ hashFiles('go.sum') }}.",
	"Kubernetes secret name: api-credentials (namespace payments).",
	"The token bucket allows 100 requests per second per tenant.",
	"JWT access tokens are signed with RS256; the public keys are at /.well-known/jwks.json.",
	"SSH to the bastion with your own key; the host key fingerprint is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s.",
	"The TLS certificate for api.acme.com expires on 2027-03-14.",
	"Grafana dashboard uid k8s-nodes-01 shows the node pressure.",
	"Sentry project id 4507123456789 gets the frontend errors.",
	"The S3 bucket acme-backups-eu-west-1 keeps 30 days of snapshots.",
	"AWS account 123456789012 is production; 210987654321 is staging.",
	"The IAM role arn:aws:iam::123456789012:role/deploy runs the pipeline.",
	"Stripe webhooks arrive at /hooks/stripe; the signing secret is in Vault.",
	"Slack alerts go to #ops-alerts; the bot's token is in the secret store.",
	"The npm package @acme/ui is published from CI only.",
	"OpenAI requests go through the proxy at llm-proxy.internal:8080.",
	"Google Maps usage is capped at 10,000 loads a day.",
	"The key rotation job runs at 03:00 UTC on the first of the month.",
	"A password reset link is valid for 15 minutes.",
	"Session cookies are HttpOnly, Secure and SameSite=Lax.",
	"The checksum of the release tarball is 5d41402abc4b2a76b9719d911017c592.",
	"Feature flag new-checkout is at 25% in eu-west-1.",
	"The on-call rotation changes every Monday at 09:00.",
	"Backups are encrypted with the KMS key alias/backups.",
	"The cron expression 0 */6 * * * runs the sync every six hours.",
	"Run make test before pushing; CI runs go test -race ./....",
	"The migration 20261201_add_index.sql takes about four minutes on prod.",
	"Version 1.30.0 of Syncthing fixed the conflict copy naming.",
	"Max connections is 200; pgbouncer pools them to 20.",
	"The health check is GET /healthz, expecting 200 within 2s.",
	"The token for the test fixtures is the string test-token, by design.",
	"Password hashing uses argon2id with 64 MiB of memory.",
	"Keys in the config are snake_case: max_note_bytes, max_file_bytes.",
	"The error was: connection refused (dial tcp 10.0.3.7:5432).",
	"Bump the chart to 3.2.1 and the app to 2026.12.05.",
	"The summariser runs with max_tokens: 4096 and temperature 0.2.",
	"password_min_length=12 in the auth service's config.",
	"secret_name: db-credentials-prod in the Helm values.",
	"api_version=2024-06-01 is the one the SDK pins.",
	"token_ttl: 3600s, refresh_token_ttl: 30d.",
	"The API_KEY variable is set by the CI secret STRIPE_API_KEY_PROD.",
}

func TestOrdinaryNotesHoldNoSecret(t *testing.T) {
	if len(ordinary) < 50 {
		t.Fatalf("%d ordinary notes; the target is at least 50", len(ordinary))
	}
	for _, note := range ordinary {
		if found := secrets.Find(note); len(found) > 0 {
			t.Errorf("%q: found %s", note, secrets.Describe(found))
		}
		if got, _ := secrets.Redact(note); got != note {
			t.Errorf("Redact changed %q into %q", note, got)
		}
		if got, _ := secrets.Hide(note); got != note {
			t.Errorf("Hide changed %q into %q", note, got)
		}
	}
}

func TestTenKinds(t *testing.T) {
	for _, c := range secretstest.Ten() {
		t.Run(c.Kind, func(t *testing.T) {
			found := secrets.Find(c.Note)
			if len(found) == 0 {
				t.Fatalf("nothing found in %q", c.Note)
			}
			if found[0].Kind != c.Kind {
				t.Errorf("kind %s, want %s (%s)", found[0].Kind, c.Kind, secrets.Describe(found))
			}
			for _, f := range found {
				if d := f.String(); strings.Contains(c.Note, d) || c.In(d) {
					t.Errorf("the description %q shows the secret", d)
				}
			}
			redacted, _ := secrets.Redact(c.Note)
			hidden, _ := secrets.Hide(c.Note)
			for _, out := range []string{redacted, hidden} {
				if c.In(out) {
					t.Errorf("the secret is still in %q", out)
				}
				if !strings.Contains(out, c.Before) || !strings.Contains(out, c.After) {
					t.Errorf("%q lost the rest of the note (%q … %q)", out, c.Before, c.After)
				}
			}
			if !strings.Contains(redacted, "[redacted: "+c.Kind+"]") {
				t.Errorf("Redact gave %q, want [redacted: %s] in it", redacted, c.Kind)
			}
			if h := secrets.Hidden(hidden); len(h) != len(found) || h[0].Kind != c.Kind {
				t.Errorf("Hidden(%q) = %v, want the %d found", hidden, h, len(found))
			}
			if h := secrets.Hidden(redacted); len(h) != 0 {
				t.Errorf("Hidden found %v in a redacted note; a redacted note holds no secret", h)
			}
		})
	}
}

func TestWhere(t *testing.T) {
	gh := secretstest.Ten()[1].Secrets[0]
	tests := []struct {
		text               string
		line, column, word int
	}{
		{gh, 1, 1, 1},
		{"token " + gh, 1, 7, 2},
		{"first line\nthe token: " + gh + " ok", 2, 12, 5},
		{"über token " + gh, 1, 12, 3},
		{"the password is:\n  " + gh + ".", 2, 3, 4},
	}
	for _, tt := range tests {
		found := secrets.Find(tt.text)
		if len(found) != 1 {
			t.Errorf("%q: found %v, want one", tt.text, found)
			continue
		}
		f := found[0]
		if f.Line != tt.line || f.Column != tt.column || f.Word != tt.word {
			t.Errorf("%q: line %d column %d word %d, want %d %d %d", tt.text, f.Line, f.Column, f.Word, tt.line, tt.column, tt.word)
		}
	}
}

func TestRepeatedSecretMaskedEverywhere(t *testing.T) {
	gh := secretstest.Ten()[1].Secrets[0]
	text := "old " + gh + " and again " + gh
	got, found := secrets.Redact(text)
	if strings.Contains(got, gh) || len(found) != 2 {
		t.Errorf("Redact(%q) = %q, %d found; want both masked", text, got, len(found))
	}
}

// TestImportsNothingOfMemminer: the package sits below every package that
// reads or writes a note (docs/development.md, Layout).
func TestImportsNothingOfMemminer(t *testing.T) {
	for _, dir := range []string{".", "secretstest"} {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/memminer/memminer/") {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
	}
}

// TestMaskerHidesPartsOfACutSecret: a long note cut in parts may cut a
// secret in two; each part is hidden by what the whole text held.
func TestMaskerHidesPartsOfACutSecret(t *testing.T) {
	creds := secretstest.Ten()
	key := creds[7] // the OpenSSH private key, over several lines
	lines := strings.Split(key.Note, "\n")
	file := "- " + strings.Join(lines, "\n  ") + "\n- next note ab\n"
	m := secrets.Scan(file)
	if len(m.Found) != 1 || m.Found[0].Kind != "private-key" || m.Found[0].Line != 2 {
		t.Fatalf("Scan found %v, want the private key at line 2", m.Found)
	}
	half := len(lines) / 2
	for _, part := range []string{strings.Join(lines[:half], "\n"), strings.Join(lines[half:], "\n")} {
		got := m.Hide(part)
		body := strings.Join(lines[1:len(lines)-1], "")
		for _, l := range lines[1 : len(lines)-1] {
			if strings.Contains(got, strings.TrimSpace(l)) && strings.Contains(body, strings.TrimSpace(l)) {
				t.Errorf("Hide(%q) = %q keeps a line of the key", part, got)
			}
		}
		if strings.Count(got, "[secret hidden: private-key]") != 1 {
			t.Errorf("Hide(%q) = %q, want one mark", part, got)
		}
	}
	if got := m.Hide("next note ab"); got != "next note ab" {
		t.Errorf("Hide changed a part without the secret: %q", got)
	}
}

// TestPasswordInProse: a password said in words is found (review of issue
// 48: "the staging password is …" was written and searched), and sentences
// about passwords are not.
func TestPasswordInProse(t *testing.T) {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	for range 100 {
		// Fourteen different characters, two of them digits: the
		// entropy of a generated password.
		perm := mathrand.Perm(len(alphabet))
		b := []byte{alphabet[len(alphabet)-1-mathrand.IntN(8)], alphabet[len(alphabet)-9-mathrand.IntN(8)]}
		for _, i := range perm {
			if len(b) == 14 {
				break
			}
			if c := alphabet[i]; !strings.ContainsRune(string(b), rune(c)) {
				b = append(b, c)
			}
		}
		pw := string(b)
		for _, s := range []string{"the staging password is " + pw, "the db pass is " + pw, "psql password " + pw, "Password: " + pw} {
			if red, f := secrets.Redact(s); len(f) == 0 || strings.Contains(red, pw) {
				t.Errorf("%q: redacted to %q, want the password gone", s, red)
			}
		}
	}
	for _, s := range []string{
		"the password policy requires 12 characters",
		"rotate the password every 90 days",
		"the password is stored in the vault",
		"password is 12-characters minimum",
		"pass the --force flag to override",
		"the password for staging is in 1Password",
		"the pass rate is 98.5% this week",
		"the password configuration lives in Vault",
	} {
		if f := secrets.Find(s); len(f) > 0 {
			t.Errorf("%q: found a %s", s, f[0].Kind)
		}
	}
}
