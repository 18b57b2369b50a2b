package capture

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// The transcripts in testdata are real: the pinned Claude Code and Codex
// wrote them in a two-turn session against a mock model (paths replaced
// by /home/user), the second turn resumed from the first.
func TestReadRealTranscripts(t *testing.T) {
	want := []string{
		"Hi! Remember that the staging DB is db-7.\nCan you fix the typo in README.md?\nFrom now on, run make lint before every commit.",
		"thanks, that looks good\nNo, we use pnpm in this repo, not npm.",
	}
	for _, client := range []string{ClaudeCode, Codex} {
		f, err := os.Open("testdata/" + client + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(client, f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: Read = %q, want %q", client, got, want)
		}
		var texts []string
		for _, d := range Directives(got) {
			texts = append(texts, d.Text)
		}
		wantD := []string{"The staging DB is db-7.", "From now on, run make lint before every commit.", "We use pnpm in this repo, not npm."}
		if !slices.Equal(texts, wantD) {
			t.Errorf("%s: directives %q, want %q", client, texts, wantD)
		}
	}
}

// TestReadLeavesOutWhatTheUserDidNotType: tool results, the client's own
// entries, subagents' prompts, injected tags, the agent's messages and
// lines too long or broken are not the user's words.
func TestReadLeavesOutWhatTheUserDidNotType(t *testing.T) {
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("always x ", MaxLineBytes/8) + `"}}`
	claude := strings.Join([]string{
		`{"type":"user","message":{"role":"user","content":"From now on, lint."}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"always use the force"}]}}`,
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"Never do the meta thing."}}`,
		`{"type":"user","isSidechain":true,"message":{"role":"user","content":"Never do the subagent thing."}}`,
		`{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Never trust the user."}]}}`,
		long,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"We decided on Go."}]}}`,
		`{"type":"user","message":`,
	}, "\n")
	codex := strings.Join([]string{
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>always</environment_context>"}]}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"From now on, lint."}}`,
		`{"type":"event_msg","payload":{"type":"agent_message","message":"Never trust the user."}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"type":"Text","text":"UserMessage never"}]}}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"We decided on Go."}]}}}`,
	}, "\n")
	for client, transcript := range map[string]string{ClaudeCode: claude, Codex: codex} {
		got, err := Read(client, strings.NewReader(transcript))
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		if want := []string{"From now on, lint.", "We decided on Go."}; !slices.Equal(got, want) {
			t.Errorf("%s: Read = %q, want %q", client, got, want)
		}
	}
	if _, err := Read("cursor", strings.NewReader("")); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("Read(cursor) = %v, want ErrUnknownClient", err)
	}
}
