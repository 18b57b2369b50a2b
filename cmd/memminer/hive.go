package main

import (
	"errors"
	"fmt"

	"github.com/memminer/memminer/hive"
)

// checkHive opens the hive at dir with the agents globs and checks it is
// one (see hive.Hive.Check), before anything slow starts. A directory
// that is no hive is refused with the --hive (or mine) to use instead.
func checkHive(dir string, agents []string) error {
	h, err := hive.Open(dir, agents)
	if err != nil {
		return err
	}
	return hiveAdvice(h.Check())
}

// hiveAdvice adds to a hive.NotHiveError what to pass instead.
func hiveAdvice(err error) error {
	var nh *hive.NotHiveError
	if !errors.As(err, &nh) {
		return err
	}
	switch nh.Looks {
	case hive.AgentsDirectory:
		return advised(err, "%s has no agents/ directory; did you mean --hive %s?", nh.Dir, nh.Meant)
	case hive.AgentDirectory:
		return advised(err, "%s has no agents/ directory; it looks like an agent directory: did you mean --hive %s?", nh.Dir, nh.Meant)
	case hive.HoldsMemory:
		return advised(err, "%v and pass that hive, or mine this directory once with memminer mine %s --wing ID", err, nh.Dir)
	}
	return err
}

// advisedError is a library error said again with the CLI's advice; it
// still matches what it wraps.
type advisedError struct {
	msg string
	err error
}

func (e *advisedError) Error() string { return e.msg }
func (e *advisedError) Unwrap() error { return e.err }

// advised returns err with the message format gives it.
func advised(err error, format string, args ...any) error {
	return &advisedError{msg: fmt.Sprintf(format, args...), err: err}
}
