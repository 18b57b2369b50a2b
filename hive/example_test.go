package hive_test

import (
	"fmt"

	"github.com/memminer/memminer/hive"
)

func ExampleParseConflictName() {
	for _, name := range []string{
		"memory.sync-conflict-20240131-093000-ABCDEFG.md",
		"memory.sync-conflict-20261201-095500-ABCDEF1.md",
		"memory.sync-conflict-20261201-095500.md",
		"notes.v2.sync-conflict-20240131-093000-ABCDEFG",
		"how-to-fix-sync-conflict-errors.md",
	} {
		cn, ok := hive.ParseConflictName(name)
		fmt.Printf("%-48s ok=%-5v original=%q winner=%q at %s\n",
			name, ok, cn.Original, cn.ShortDevice, cn.Time.Format("2006-01-02 15:04:05"))
	}
	// Output:
	// memory.sync-conflict-20240131-093000-ABCDEFG.md  ok=true  original="memory.md" winner="ABCDEFG" at 2024-01-31 09:30:00
	// memory.sync-conflict-20261201-095500-ABCDEF1.md  ok=true  original="memory.md" winner="ABCDEF1" at 2026-12-01 09:55:00
	// memory.sync-conflict-20261201-095500.md          ok=true  original="memory.md" winner="" at 2026-12-01 09:55:00
	// notes.v2.sync-conflict-20240131-093000-ABCDEFG   ok=true  original="notes.v2" winner="ABCDEFG" at 2024-01-31 09:30:00
	// how-to-fix-sync-conflict-errors.md               ok=false original="" winner="" at 0001-01-01 00:00:00
}
