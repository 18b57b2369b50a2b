package hive

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMachineFiles(t *testing.T) {
	tests := []struct {
		name    string
		machine string // "" when the name is no machine's memory file
		main    bool
	}{
		{"memory.md", "", true},
		{"Memory.MD", "", true},
		{"memory.laptop.md", "laptop", true},
		{"agents/a/memory.srv-2.md", "srv-2", true},
		{"MEMORY.Laptop.md", "laptop", true},
		{"memory..md", "", false},
		{"memory.a.b.md", "", false},
		{"memory.-x.md", "", false},
		{"memory.laptop.markdown", "", false},
		{"notes.md", "", false},
		{"memory.laptop.sync-conflict-20261204-120000-ABCDEFG.md", "", false},
	}
	for _, tt := range tests {
		m, ok := MachineOf(tt.name)
		if m != tt.machine || ok != (tt.machine != "") {
			t.Errorf("MachineOf(%q) = %q, %v; want %q", tt.name, m, ok, tt.machine)
		}
		if got := IsMainMemoryFile(tt.name); got != tt.main {
			t.Errorf("IsMainMemoryFile(%q) = %v, want %v", tt.name, got, tt.main)
		}
	}
	if got := MachineFileName("laptop"); got != "memory.laptop.md" {
		t.Errorf("MachineFileName = %q", got)
	}
	if m, ok := MachineOf(MachineFileName(DefaultMachine())); !ok || m != DefaultMachine() {
		t.Errorf("DefaultMachine %q gives a file name MachineOf reads as %q, %v", DefaultMachine(), m, ok)
	}
	for _, bad := range []string{"", "-x", "a.b", "a/b", "é", string(make([]byte, 49))} {
		if _, err := NormalizeMachine(bad); err == nil {
			t.Errorf("NormalizeMachine(%q) accepted", bad)
		}
	}
	if m, err := NormalizeMachine(" Laptop_2 "); err != nil || m != "laptop_2" {
		t.Errorf("NormalizeMachine = %q, %v", m, err)
	}
}

// TestMachineFileMakesAnAgentDirectory: a directory holding only a
// machine's memory file is known as an agent directory, as one holding
// memory.md is.
func TestMachineFileMakesAnAgentDirectory(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "pam")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, self := InAgentDir(agent, Globs{}, ""); self {
		t.Fatal("an empty directory is an agent directory")
	}
	if err := os.WriteFile(filepath.Join(agent, MachineFileName("laptop")), []byte("- x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, self := InAgentDir(agent, Globs{}, ""); !self {
		t.Error("a directory holding memory.laptop.md is not an agent directory")
	}
	h, err := Open(agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	var nh *NotHiveError
	if err := h.Check(); !errors.As(err, &nh) || nh.Looks != HoldsMemory {
		t.Errorf("Check of a directory holding memory.laptop.md: %v, want HoldsMemory", err)
	}
}
