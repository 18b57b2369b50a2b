//go:build unix

package wakeup

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/mine"
)

// TestIdentityFIFOIsRefused: an identity.md that is a named pipe, beside
// a wing's single mined file, once hung wake-up until a writer came (and
// no signal ended it). It is refused, and the wing keeps its other
// identity.
func TestIdentityFIFOIsRefused(t *testing.T) {
	hive := writeHive(t, []hiveFile{
		{path: "agents/a/memory.md", content: "---\nrole: Billing agent.\n---\n# A\n- Invoices go out on the 1st.\n"},
	})
	fifo := filepath.Join(hive, "agents", "a", IdentityFile)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFileLimited(fifo); !errors.Is(err, hivefile.ErrNotRegular) {
		t.Fatalf("ReadFileLimited(fifo) = %v, want ErrNotRegular", err)
	}
	p := minePalace(t, filepath.Join(hive, "agents", "a", "memory.md"), nil, mine.Options{Wing: "a"})
	type result struct {
		d   Digest
		err error
	}
	done := make(chan result)
	go func() {
		d, err := Build(p, Options{ReadFile: ReadFileLimited})
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		d := r.d
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(d.Identity) != 1 || d.Identity[0].Text != "Billing agent." || d.Identity[0].From != FromRole {
			t.Errorf("identity = %+v, want the role", d.Identity)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("wake-up blocked on a FIFO identity.md")
	}
}
