package capture

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// session is one labelled session for the capture benchmark: what the
// user typed, turn by turn, the tool output the client recorded between
// turns, and the directives a person reading it would have captured.
type session struct {
	name   string
	turns  []string
	tool   string
	expect []string
}

// longLog is a tool's output full of sentences that would be directives
// if a user had said them: capture must never read it.
var longLog = strings.Repeat("From now on the retry loop backs off. Always check the exit code. We decided nothing. Never mind.\n", 400)

// sessions were written after the classifier, from the kinds of
// sessions agents have: none of their sentences is in classify_test.go.
var sessions = []session{
	{"deploy-rules", []string{
		"The staging deploy failed again, can you look at the logs?",
		"ok I see. From now on, always run the smoke tests before promoting a build.",
		"thanks, that fixed it",
	}, longLog, []string{"From now on, always run the smoke tests before promoting a build."}},
	{"tooling", []string{
		"Please install the deps and run the build.",
		"No, we use uv here, not pip.",
		"great",
	}, "", []string{"We use uv here, not pip."}},
	{"naming", []string{
		"Rename getUser to fetchUser everywhere.",
		"Also remember that React components live in src/components and hooks in src/hooks.",
	}, "", []string{"React components live in src/components and hooks in src/hooks."}},
	{"chatter-only", []string{
		"hey, can you explain what this regex does?",
		"cool, makes sense",
		"ok let's move the constant to config.go",
		"thanks!",
	}, longLog, nil},
	{"decision", []string{
		"We decided to keep the monorepo and split CI per package.",
		"Can you draft the workflow file?",
	}, "", []string{"We decided to keep the monorepo and split CI per package."}},
	{"one-off", []string{
		"Skip the e2e tests for now, they are flaky.",
		"Use the staging bucket this time.",
		"Just this once, commit without the hook.",
	}, "", nil},
	{"correction", []string{
		"Add the endpoint to the router.",
		"Actually, we never put business logic in handlers; it goes in the service layer.",
	}, "", []string{"We never put business logic in handlers; it goes in the service layer."}},
	{"secret", []string{
		"Remember that the grafana admin user is ops-admin.",
		"Here is the log:\n```\nERROR: always retry on 503\n```",
	}, "", []string{"The grafana admin user is ops-admin."}},
	{"testing-conventions", []string{
		"Write a test for the parser.",
		"In this repo we name test files after the file they test, with _test at the end.",
		"Keep in mind that the fixtures under testdata/ are generated; don't edit them by hand.",
	}, "", []string{
		"In this repo we name test files after the file they test, with _test at the end.",
		"The fixtures under testdata/ are generated; don't edit them by hand.",
	}},
	{"questions", []string{
		"Should we always use context.Background here?",
		"Do we never cache these responses?",
		"What did we decide about the cache?",
	}, "", nil},
	{"going-forward", []string{
		"Going forward, PR titles follow Conventional Commits.",
		"Thanks, and fix the lint errors.",
	}, "", []string{"Going forward, PR titles follow Conventional Commits."}},
	{"never-prod", []string{
		"Never restart the production workers during business hours.",
		"Can you check the queue depth?",
	}, longLog, []string{"Never restart the production workers during business hours."}},
	{"preferences", []string{
		"I prefer shorter commit messages.",
		"Use table-driven tests instead of one function per case.",
	}, "", []string{"Use table-driven tests instead of one function per case."}},
	{"remarks", []string{
		"It never works on the first try, does it.",
		"Always something with this CI.",
		"I've never seen the linter this slow.",
	}, "", nil},
	{"next-time", []string{
		"Next time, open a draft PR before pushing the whole feature.",
		"ok cool",
	}, "", []string{"Next time, open a draft PR before pushing the whole feature."}},
	{"agreed", []string{
		"We agreed with the backend team that all IDs are UUIDv7.",
		"Now regenerate the types.",
	}, "", []string{"We agreed with the backend team that all IDs are UUIDv7."}},
	{"pasted-instructions", []string{
		"Here is the README section:\n> Always run `make setup` first.\n> Never commit the .env file.\nSummarise it please.",
	}, "", nil},
	{"repeated", []string{
		"Remember that the VPN must be on to reach the registry.",
		"again: remember that the VPN must be on to reach the registry.",
	}, "", []string{"The VPN must be on to reach the registry."}},
	{"rules-list", []string{
		"A few rules for this project:\n- always use the logger from internal/log\n- never import from another service's internal package\n- prefer small PRs",
	}, "", []string{"Always use the logger from internal/log", "Never import from another service's internal package"}},
	{"hedged", []string{
		"Maybe we should always vendor dependencies.",
		"I think we decided to drop Windows support, not sure.",
		"We might switch to Bazel in the future.",
	}, "", nil},
	{"forgot", []string{
		"Don't forget that the mobile app pins API version 3.",
		"run the migrations",
	}, "", []string{"The mobile app pins API version 3."}},
}

// claudeLines writes s as a Claude Code transcript: each turn a user
// entry, the tool output a tool_result entry after the first.
func (s session) claudeLines() string {
	var b strings.Builder
	for i, turn := range s.turns {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": turn}})
		b.Write(line)
		b.WriteByte('\n')
		if i == 0 && s.tool != "" {
			line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user",
				"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": s.tool}}}})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// codexLines writes s as a Codex rollout: each turn a UserMessage item,
// the tool output a function_call_output item after the first.
func (s session) codexLines() string {
	var b strings.Builder
	for i, turn := range s.turns {
		line, _ := json.Marshal(map[string]any{"type": "event_msg", "payload": map[string]any{"type": "item_completed",
			"item": map[string]any{"type": "UserMessage", "content": []any{map[string]any{"type": "text", "text": turn}}}}})
		b.Write(line)
		b.WriteByte('\n')
		if i == 0 && s.tool != "" {
			line, _ := json.Marshal(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": "c1", "output": s.tool}})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestCaptureSessions measures capture on the labelled sessions, read
// back from both clients' transcript formats (BENCHMARKS.md, "Capture"):
// recall is the expected directives captured, precision the captured
// directives that were expected.
func TestCaptureSessions(t *testing.T) {
	if len(sessions) < 20 {
		t.Fatalf("%d sessions, want at least 20", len(sessions))
	}
	for _, client := range []string{ClaudeCode, Codex} {
		expected, captured, right := 0, 0, 0
		for _, s := range sessions {
			text := s.claudeLines()
			if client == Codex {
				text = s.codexLines()
			}
			msgs, err := Read(client, strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range Directives(msgs) {
				got = append(got, d.Text)
			}
			expected += len(s.expect)
			captured += len(got)
			for _, g := range got {
				if slices.Contains(s.expect, g) {
					right++
				}
			}
			if !slices.Equal(got, s.expect) {
				t.Logf("%s %s: captured %q, want %q", client, s.name, got, s.expect)
			}
		}
		recall, precision := float64(right)/float64(expected), 1.0
		if captured > 0 {
			precision = float64(right) / float64(captured)
		}
		t.Logf("%s: %d sessions, %d directives expected, %d captured, %d right: recall %.1f%%, precision %.1f%%",
			client, len(sessions), expected, captured, right, 100*recall, 100*precision)
		if recall < 0.9 || precision < 0.95 {
			t.Errorf("%s: recall %.2f, precision %.2f: want at least 0.90 and 0.95", client, recall, precision)
		}
	}
}
