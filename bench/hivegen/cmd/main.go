// Command hivegen writes a deterministic synthetic hive for benchmarks:
//
//	go run ./bench/hivegen/cmd --notes 10000 --out /tmp/hive10k
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/memminer/memminer/bench/hivegen"
)

func main() {
	notes := flag.Int("notes", 10000, "total notes")
	agents := flag.Int("agents", 0, "agents (default notes/1000)")
	out := flag.String("out", "", "hive directory to write (required)")
	flag.Parse()
	if *out == "" || *notes <= 0 {
		fmt.Fprintln(os.Stderr, "usage: hivegen --notes N --out DIR [--agents A]")
		os.Exit(2)
	}
	ids, err := hivegen.Write(*out, hivegen.Options{Notes: *notes, Agents: *agents})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hivegen:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d notes for %d agents under %s\n", *notes, len(ids), *out)
}
