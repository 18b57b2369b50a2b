package remember

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSameFact: a duplicate is the same fact, decided from the text;
// pairs of different facts that read alike are not (issue 23, item 1).
func TestSameFact(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"Aisle seats preferred on all flights", "aisle seats are preferred on all flights (added 2026-12-01)", true},
		// remember --ttl writes a review date after the note: the same fact.
		{"Rotate the API keys", "Rotate the API keys (added 2026-12-01) (review: 2026-12-31)", true},
		{"Rotate the API keys", "Rotate the API keys, review: 2026-12-31 the second batch", false},
		// memminer capture writes where a note came from: the same fact
		// captured in two sessions, or remembered by hand.
		{"The staging DB is db-7 (captured from the user's words: codex session 01a2-b3) (added 2026-12-02)",
			"The staging DB is db-7 (captured from the user's words: claude-code session 31d7-98) (review: 2027-03-02) (added 2026-12-01)", true},
		{"The staging DB is db-7", "The staging DB is db-7 (captured from the user's words: claude-code session 31d7-98)", true},
		{"The staging DB is db-7", "The staging DB is db-7 (captured from the user's notes: db-8)", false},
		{"Deploys to production need two approvals from the on-call team", "Deploys to production need two approvals from the on-call team #ops", true},
		{"The **build** uses `make deploy`.", "the build uses make deploy", true},
		{"Deploy to production with make deploy", "Do NOT deploy to production with make deploy", false},
		{"db-2 is the primary", "db-3 is the primary since the failover", false},
		{"db-2 is the primary", "db-3 is the primary", false},
		{"The API listens on port 8080", "The API listens on port 8081", false},
		{"Backups run at 02:00", "Backups run at 03:00", false},
		{"Use pgbouncer with max_client_conn 100", "Use pgbouncer with max_client_conn 200", false},
		{"Alice owns the billing service", "Bob owns the billing service", false},
		{"Releases ship on Tuesdays", "Releases ship on Thursdays", false},
		{"The cache is enabled in staging", "The cache isn't enabled in staging", false},
		{"Never push to main", "Always push to main", false},
		{"Tests run in CI", "Tests never run in CI", false},
		// Found by a review: function words and symbols that change a
		// statement, and which word a negation negates.
		{"run migrations before deploy", "run migrations after deploy", false},
		{"above 80% cpu scale up", "below 80% cpu scale up", false},
		{"alerts go to pam", "alerts go to pam only", false},
		{"the cache can be flushed", "the cache has been flushed", false},
		{"the cache can be flushed", "the cache should be flushed", false},
		{"Use pnpm not npm", "Use npm not pnpm", false},
		{"the service is written in C++", "the service is written in C#", false},
		{"the quota is 10%", "the quota is 10", false},
		{"the plan costs $5", "the plan costs €5", false},
		{"Run migrations before deploy.", "run the migrations before deploying", true},
		{"Use pnpm, not npm", "use pnpm not npm", true},
		// Word order counts: the same words can state the opposite.
		{"copy prod to staging", "copy staging to prod", false},
		{"the api depends on auth", "auth depends on the api", false},
		{"Deploy with make deploy", "deploy with make deploy", true},
	}
	for _, tt := range tests {
		if got := SameFact(tt.a, tt.b); got != tt.same {
			t.Errorf("SameFact(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// TestRememberNewFactIsWritten: a note that only resembles one of the
// wing's is written, and the answer names the note it resembles.
func TestRememberNewFactIsWritten(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/b/memory.md": "# B\n\n- Deploy to production with make deploy\n- db-2 is the primary\n"})
	for _, tt := range []struct{ text, similar string }{
		{"Do NOT deploy to production with make deploy", "Deploy to production"},
		{"db-3 is the primary", "db-2 is the primary"},
	} {
		res, err := f.remember(t, Request{Wing: "b", Text: tt.text})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Added || res.DuplicateOf != nil {
			t.Fatalf("%q: %+v, want it written", tt.text, res)
		}
		if res.SimilarTo == nil || !strings.Contains(res.SimilarTo.Text, tt.similar) || res.SimilarTo.File != "agents/b/memory.md" {
			t.Errorf("%q: similar_to = %+v, want the note %q", tt.text, res.SimilarTo, tt.similar)
		}
		if !strings.Contains(f.read(t, "agents/b/memory.laptop.md"), "- "+tt.text+" (added 2026-12-01)") {
			t.Errorf("%q is not in the file", tt.text)
		}
	}
}

// TestRememberSupersedeAfterHint: the hint's advice, remember again with
// --supersedes, marks the old note and does not write the new one twice.
func TestRememberSupersedeAfterHint(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/b/memory.md": "# B\n\n- db-2 is the primary\n"})
	first, err := f.remember(t, Request{Wing: "b", Text: "db-3 is the primary"})
	if err != nil || first.SimilarTo == nil {
		t.Fatalf("first: %+v, %v", first, err)
	}
	res, err := f.remember(t, Request{Wing: "b", Text: "db-3 is the primary", Supersedes: []string{first.SimilarTo.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added || res.DuplicateOf == nil || res.DuplicateOf.ID != first.ID || len(res.Superseded) != 1 || res.Superseded[0].ID != first.SimilarTo.ID {
		t.Fatalf("supersede after the hint: %+v", res)
	}
	if got := f.read(t, "agents/b/memory.md"); got != "# B\n\n- db-2 is the primary (superseded 2026-12-01)\n" {
		t.Errorf("memory.md = %q", got)
	}
	if got := f.read(t, "agents/b/memory.laptop.md"); strings.Count(got, "db-3") != 1 {
		t.Errorf("memory.laptop.md = %q", got)
	}
}

// TestRememberMachines: each machine appends to its own file; all of
// them, and an older memory.md, are the wing's memory.
func TestRememberMachines(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/pam/memory.md": "# Pam\n\n- The office opens at 8\n"})
	for _, m := range []string{"laptop", "server"} {
		f.opts.Machine = m
		res, err := f.remember(t, Request{Wing: "pam", Text: "Written on " + m})
		if err != nil || !res.Added || res.File != "agents/pam/memory."+m+".md" || res.Line != 7 {
			t.Fatalf("%s: %+v, %v", m, res, err)
		}
	}
	got := map[string]bool{}
	for _, n := range f.p.Notes("pam") {
		got[filepath.Base(n.Source)+": "+n.Text] = true
	}
	for _, want := range []string{"memory.md: The office opens at 8", "memory.laptop.md: Written on laptop (added 2026-12-01)", "memory.server.md: Written on server (added 2026-12-01)"} {
		if !got[want] {
			t.Errorf("wing pam lacks %q: %v", want, got)
		}
	}
	f.opts.Machine = "bad.name"
	if _, err := f.remember(t, Request{Wing: "pam", Text: "x"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("a bad machine name: %v, want ErrBadRequest", err)
	}
}

// TestRememberSymlinkIntoAnotherWing: a link in one agent directory to
// another agent's file is refused, naming the link (issue 24).
func TestRememberSymlinkIntoAnotherWing(t *testing.T) {
	const aMemory = "# A\n\n- a's own fact\n"
	for _, tt := range []struct {
		name, link string
		req        Request
	}{
		{"the machine's file", "memory.laptop.md", Request{Wing: "inner", Text: "x"}},
		{"a note to supersede", "memory.md", Request{Wing: "inner", Text: "y", Supersedes: []string{"memory.md:3"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, map[string]string{"agents/a/memory.md": aMemory, "agents/a/memory.laptop.md": aMemory, "agents/inner/notes.md": "- inner's note\n"})
			link := filepath.Join(f.hive, "agents", "inner", tt.link)
			if err := os.Symlink(filepath.Join("..", "a", tt.link), link); err != nil {
				t.Fatal(err)
			}
			_, err := f.remember(t, tt.req)
			var le *LinkError
			if !errors.Is(err, ErrOutsideAgentDir) || !errors.As(err, &le) || le.Link != "agents/inner/"+tt.link {
				t.Fatalf("err = %v, want a LinkError naming agents/inner/%s", err, tt.link)
			}
			for _, name := range []string{"memory.md", "memory.laptop.md"} {
				if got := f.read(t, "agents/a/"+name); got != aMemory {
					t.Errorf("agents/a/%s changed: %q", name, got)
				}
			}
		})
	}
}

// TestRememberSupersededByGovernance: whether a note is superseded is
// governance's decision, not a substring's (issue 25).
func TestRememberSupersededByGovernance(t *testing.T) {
	f := newFixture(t, map[string]string{
		"agents/g/memory.md": "# G\n\n- ~~The old build host~~\n- The old runner status: superseded\n- (superseded builds are purged) nightly\n\n## Superseded\n- The old deploy key\n",
		"agents/g/old.md":    "---\nstatus: superseded\n---\n- The old wiki\n",
	})
	if _, err := f.remember(t, Request{Wing: "g", Text: "seed"}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"memory.md:3", "memory.md:4", "memory.md:8", "old.md:4"} {
		_, err := f.remember(t, Request{Wing: "g", Text: "replacement for " + ref, Supersedes: []string{ref}})
		var re *RefError
		if !errors.As(err, &re) || re.Kind != RefSuperseded {
			t.Errorf("supersede %s: %v, want it refused as already superseded", ref, err)
		}
	}
	res, err := f.remember(t, Request{Wing: "g", Text: "Superseded builds are kept a week", Supersedes: []string{"memory.md:5"}})
	if err != nil || len(res.Superseded) != 1 {
		t.Fatalf("supersede a live note naming (superseded: %+v, %v", res, err)
	}
	if got := f.read(t, "agents/g/memory.md"); !strings.Contains(got, "- (superseded builds are purged) nightly (superseded 2026-12-01)\n") {
		t.Errorf("memory.md = %q", got)
	}
}

// TestRememberRetry: a request sent again after its answer was lost (the
// daemon died answering) is answered as written, once.
func TestRememberRetry(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/pam/memory.md": "- one\n"})
	req := Request{Wing: "pam", Text: "The fire drill is on Friday", AllowDuplicate: true}
	first, err := f.remember(t, req)
	if err != nil || !first.Added {
		t.Fatalf("first: %+v, %v", first, err)
	}
	req.Retry = true
	again, err := f.remember(t, req)
	if err != nil || !again.Added || again.Line != first.Line || again.ID != first.ID || again.DuplicateOf != nil {
		t.Fatalf("again: %+v, %v; want the first write (%+v)", again, err, first)
	}
	if got := f.read(t, "agents/pam/memory.laptop.md"); strings.Count(got, "fire drill") != 1 {
		t.Errorf("written twice: %q", got)
	}
}

// TestRememberConcurrentAppender: remember and another process appending
// to the same file at the same time lose no line, and remember does not
// give up (issue 23, item 6).
func TestRememberConcurrentAppender(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/pam/memory.laptop.md": "# Pam\n\n"})
	path := filepath.Join(f.hive, "agents", "pam", "memory.laptop.md")
	const n = 30
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	echoes := 0
	go func() {
		defer wg.Done()
		// A steady appender, paced and bounded so the file stays small
		// (under -race remember is slow, and mines every line).
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for echoes < 3000 {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(fh, "- echo line %d\n", echoes)
			fh.Close()
			echoes++
		}
	}()
	ctx := context.Background()
	for i := range n {
		if _, err := Remember(ctx, f.p, Request{Wing: "pam", Text: fmt.Sprintf("remembered fact number %d", i)}, f.opts); err != nil {
			close(done)
			wg.Wait()
			t.Fatalf("remember %d: %v", i, err)
		}
	}
	close(done)
	wg.Wait()
	got := f.read(t, "agents/pam/memory.laptop.md")
	for i := range echoes {
		if c := strings.Count(got, fmt.Sprintf("- echo line %d\n", i)); c != 1 {
			t.Fatalf("echo line %d appears %d times", i, c)
		}
	}
	for i := range n {
		if c := strings.Count(got, fmt.Sprintf("remembered fact number %d (added", i)); c != 1 {
			t.Fatalf("note %d appears %d times", i, c)
		}
	}
	t.Logf("%d notes remembered while %d lines were appended", n, echoes)
}

// TestRememberRetryMarksOthers: a request replayed after the daemon died
// between writing the note and marking what it replaces in another file
// marks it then, and answers with it.
func TestRememberRetryMarksOthers(t *testing.T) {
	const memory = "# Pam\n\n- The fire drill is on Thursday\n"
	f := newFixture(t, map[string]string{"agents/pam/memory.md": memory})
	req := Request{Wing: "pam", Text: "The fire drill is on Friday", Supersedes: []string{"memory.md:3"}, AllowDuplicate: true}
	if _, err := f.remember(t, req); err != nil {
		t.Fatal(err)
	}
	// Undo the mark, as if the first attempt had stopped after its own write.
	if err := os.WriteFile(filepath.Join(f.hive, "agents", "pam", "memory.md"), []byte(memory), 0o644); err != nil {
		t.Fatal(err)
	}
	req.Retry = true
	res, err := f.remember(t, req)
	if err != nil || !res.Added || len(res.Superseded) != 1 || res.Superseded[0].File != "agents/pam/memory.md" {
		t.Fatalf("replay: %+v, %v; want the note of memory.md superseded", res, err)
	}
	if got := f.read(t, "agents/pam/memory.md"); !strings.Contains(got, "Thursday (superseded 2026-12-01)") {
		t.Errorf("memory.md = %q, want the old note marked", got)
	}
	if got := f.read(t, "agents/pam/memory.laptop.md"); strings.Count(got, "Friday") != 1 {
		t.Errorf("written twice: %q", got)
	}
}
