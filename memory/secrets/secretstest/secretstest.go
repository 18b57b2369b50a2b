// Package secretstest makes realistic credentials at run time, for tests:
// none is ever written into the source as a live-looking key, and each
// run draws new ones.
package secretstest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
)

// draw is n characters of alphabet, at random.
func draw(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// Credential is one secret of a kind, and a note that holds it as a
// person or an agent would write it.
type Credential struct {
	// Kind is the kind secrets.Find reports.
	Kind string
	// Secrets are the parts a note must never show (both keys of an AWS
	// pair).
	Secrets []string
	// Note holds them, with words before and after that must survive a
	// redaction: Before and After.
	Note          string
	Before, After string
}

// Ten returns one credential of each of the ten kinds memminer is held to
// (issue 48): an AWS key pair, a GitHub token, a Slack bot token, a Stripe
// live key, an OpenAI project key, a Google API key, a password in a
// database URL, an OpenSSH private key, an api_key= assignment and an npm
// token.
func Ten() []Credential {
	awsID := "AK" + "IA" + draw("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	awsSecret := draw(alnum+"+/", 40)
	opensshBody := base64.StdEncoding.EncodeToString(randomBytes(300))
	var key strings.Builder
	key.WriteString("-----BEGIN OPENSSH " + "PRIVATE KEY-----\n")
	for len(opensshBody) > 70 {
		key.WriteString(opensshBody[:70] + "\n")
		opensshBody = opensshBody[70:]
	}
	key.WriteString(opensshBody + "\n-----END OPENSSH " + "PRIVATE KEY-----")
	openai := "sk-" + "proj-" + draw(alnum+"_-", 74) + "T3Blbk" + "FJ" + draw(alnum+"_-", 74)
	for openai[len(openai)-1] == '-' || openai[len(openai)-1] == '_' {
		openai = openai[:len(openai)-1] + draw(alnum, 1)
	}
	dbPass := draw(alnum, 18)
	return []Credential{
		mk("aws-access-token", "The deploy user's keys: aws_access_key_id = %s and aws_secret_access_key = %s", "The deploy user's keys:", "", awsID, awsSecret),
		mk("github-pat", "CI pushes tags with the token %s, owned by the release bot.", "CI pushes tags with the token", "owned by the release bot.", "gh"+"p_"+draw(alnum, 36)),
		mk("slack-bot-token", "The alerts bot posts to #ops with %s since Monday.", "The alerts bot posts to #ops with", "since Monday.", "xo"+"xb-"+draw(digits, 12)+"-"+draw(digits, 13)+"-"+draw(alnum, 24)),
		mk("stripe-access-token", "Billing runs against Stripe with the key %s in production.", "Billing runs against Stripe with the key", "in production.", "sk"+"_live_"+draw(alnum, 24)),
		mk("openai-api-key", "The summariser calls OpenAI with %s for the eval project.", "The summariser calls OpenAI with", "for the eval project.", openai),
		mk("gcp-api-key", "Maps on the status page use the Google key %s until the quota review.", "Maps on the status page use the Google key", "until the quota review.", "AI"+"za"+draw(alnum+"_-", 34)+draw(alnum, 1)),
		mk("url-password", "The reporting job connects to %s nightly.", "The reporting job connects to", "nightly.", "postgres://report:"+dbPass+"@db-1.internal:5432/reports"),
		mk("private-key", "The bastion's deploy key, until it moves to the vault:\n%s\nRotate it after the audit.", "The bastion's deploy key, until it moves to the vault:", "Rotate it after the audit.", key.String()),
		mk("credential-assignment", "The weather widget is configured with api_key=%s in its env file.", "The weather widget is configured with", "in its env file.", draw(alnum, 32)),
		mk("npm-access-token", "Publishing @acme/ui uses the npm token %s from the release laptop.", "Publishing @acme/ui uses the npm token", "from the release laptop.", "np"+"m_"+draw(lower+digits, 36)),
	}
}

func mk(kind, format, before, after string, secrets ...string) Credential {
	args := make([]any, len(secrets))
	for i, s := range secrets {
		args[i] = s
	}
	c := Credential{Kind: kind, Before: before, After: after}
	c.Note = fmt.Sprintf(format, args...)
	c.Secrets = secrets
	if kind == "url-password" {
		// The password is the secret; the rest of the URL says where the
		// database is, and stays.
		c.Secrets = []string{secrets[0][len("postgres://report:"):strings.IndexByte(secrets[0], '@')]}
	}
	return c
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.UintN(256))
	}
	return b
}

// In reports whether s shows any of c's secrets.
func (c Credential) In(s string) bool {
	for _, secret := range c.Secrets {
		if strings.Contains(s, secret) {
			return true
		}
	}
	return false
}
