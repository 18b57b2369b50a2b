package hive

import "testing"

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
