package main

import "github.com/memminer/memminer/hive"

// checkHive opens the hive at dir with the agents globs and checks it is
// one (see hive.Hive.Check), before anything slow starts.
func checkHive(dir string, agents []string) error {
	h, err := hive.Open(dir, agents)
	if err != nil {
		return err
	}
	return h.Check()
}
