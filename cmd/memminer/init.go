package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/hive"
)

// Files memminer init writes at the top of the hive.
const (
	protocolFile = "PROTOCOL.md"
	stignoreFile = ".stignore"
)

// stignoreText is the .stignore init writes: Syncthing shares everything
// but the temporary files of memminer's atomic writes (atomicfile's
// ".NAME.tmp-N") and of editors, which it would otherwise copy half-written.
const stignoreText = `// Written by memminer init. Syncthing shares the hive but these files:
// the temporary files of memminer's atomic writes and of editors.
(?d).*.tmp-*
(?d)*.swp
(?d)*~
(?d).#*
`

// initResult is what memminer init did, as --json prints it.
type initResult struct {
	Hive   string `json:"hive"`
	Config string `json:"config"`
	// Created are the paths written, Existing those left alone as found.
	Created  []string `json:"created"`
	Existing []string `json:"existing"`
	// Settings are the config keys written to Config now.
	Settings []string `json:"settings"`
	// Git is the merge driver's set-up when the hive lies in a Git work
	// tree; null otherwise.
	Git  *githive.SetupResult `json:"git"`
	Next []string             `json:"next"`
}

func (a *app) initCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Create a hive and make it the one later commands find",
		Long: `Create the hive DIR (or --hive DIR; default: the configured hive, else the
hive of the daemon serving the palace, else the current directory) and make
it the one every later command of this user finds:

  DIR/agents/        one directory per agent, agents/<id>/memory.<machine>.md
  DIR/PROTOCOL.md    the memory protocol (memminer protocol) for the agents
  DIR/.stignore      keeps temporary files out of a Syncthing share
  .gitattributes     when DIR lies in a Git work tree: memminer git setup
  config file        hive: DIR, and palace: when --palace or its variable
                     chose it (the default needs no line)

It never overwrites: a file already there is kept as it is, a config file
that names another hive is an error, and running it again changes nothing.
It then says what to run next: start the daemon, connect an agent.`,
		Example: `  memminer init ~/hive
  memminer init ~/hive --palace ~/palaces/team --json`,
		Args: maxArgs(1, "init takes one DIR at most, the hive"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := a.cfg.Hive
			if len(args) == 1 {
				if cmd.Flags().Changed("hive") && !namesOneFile(absOr(args[0]), absOr(dir)) {
					return usagef("init got two hives, DIR %s and --hive %s: give one", args[0], dir)
				}
				dir = args[0]
			}
			if dir == "" {
				dir = "."
			}
			res, err := a.initHive(cmd, dir)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, res)
			}
			printInit(a, res)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was created as JSON")
	settingFlags(cmd.Flags(), "hive")
	return cmd
}

// absOr is path made absolute, else path itself.
func absOr(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// initHive creates the hive dir and its files, and writes the config.
func (a *app) initHive(cmd *cobra.Command, dir string) (initResult, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return initResult{}, err
	}
	if info, err := os.Stat(abs); err == nil && !info.IsDir() {
		return initResult{}, usagef("%s is a file; give init a directory for the hive", dir)
	}
	// A directory that looks like an agents or agent directory is not
	// given an agents/ of its own: the hive it belongs to is named.
	if err := checkHive(abs, a.cfg.Agents); err != nil {
		return initResult{}, err
	}
	file := a.configFile
	if file == "" {
		file = config.DefaultFile(a.getenv)
	}
	res := initResult{Hive: abs, Config: file, Created: []string{}, Existing: []string{}}
	values := map[string]string{"hive": abs}
	if a.settingFrom(cmd, "palace") != "palace" {
		values["palace"] = a.cfg.Palace
	}
	// The config is checked first: a file that names another hive
	// leaves everything as it was.
	if _, err := config.Missing(file, values); err != nil {
		return res, initConfigAdvice(err)
	}
	a.cfg.Hive = abs
	if err := a.initFiles(&res); err != nil {
		return res, err
	}
	if res.Settings, err = config.AddToFile(file, values); err != nil {
		return res, initConfigAdvice(err)
	}
	if res.Settings == nil {
		res.Settings = []string{}
	}
	h, err := hive.Open(abs, a.cfg.Agents)
	if err != nil {
		return res, err
	}
	switch git, err := githive.Setup(cmd.Context(), abs, h.Globs(), driverProgram()); {
	case errors.Is(err, githive.ErrNotRepo):
	case err != nil:
		return res, err
	default:
		res.Git = &git
	}
	res.Next = a.initNext(file)
	return res, nil
}

// initConfigAdvice says what to do about a config file that names
// another hive or palace.
func initConfigAdvice(err error) error {
	if errors.Is(err, config.ErrOtherValue) {
		return advised(err, "%v; edit that line, or give init --config FILE to keep this hive's settings in a file of their own", err)
	}
	return err
}

// initFiles creates agents/, PROTOCOL.md and .stignore in res.Hive, each
// only when missing.
func (a *app) initFiles(res *initResult) error {
	agents := filepath.Join(res.Hive, hive.DefaultDir)
	switch err := os.Mkdir(agents, 0o755); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(agents, 0o755); err != nil {
			return err
		}
		res.Created = append(res.Created, agents)
	case errors.Is(err, fs.ErrExist):
		res.Existing = append(res.Existing, agents)
	case err != nil:
		return err
	default:
		res.Created = append(res.Created, agents)
	}
	p, err := a.protocolParams()
	if err != nil {
		return err
	}
	var protocol bytes.Buffer
	if err := writeProtocol(&protocol, p); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{protocolFile, protocol.Bytes()}, {stignoreFile, []byte(stignoreText)}} {
		path := filepath.Join(res.Hive, f.name)
		created, err := createFile(path, f.data)
		if err != nil {
			return err
		}
		if created {
			res.Created = append(res.Created, path)
		} else {
			res.Existing = append(res.Existing, path)
		}
	}
	return nil
}

// createFile writes data to a new file at path; a file already there is
// kept as it is (created false).
func createFile(path string, data []byte) (created bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// initNext are the commands to run after init: the daemon, then an agent.
func (a *app) initNext(file string) []string {
	config := ""
	if a.configFile != "" {
		config = " --config " + file
	}
	return []string{
		"memminer install --user" + config + " && memminer start --user",
		"memminer connect " + connect.AgentIDs()[0] + " --wing ID" + config,
	}
}

func printInit(a *app, res initResult) {
	w := a.stdout
	for _, p := range res.Created {
		fmt.Fprintf(w, "created  %s\n", displayPath(p))
	}
	for _, p := range res.Existing {
		fmt.Fprintf(w, "kept     %s (already there)\n", displayPath(p))
	}
	if len(res.Settings) > 0 {
		for _, k := range res.Settings {
			fmt.Fprintf(w, "set      %s in %s\n", k, res.Config)
		}
	} else {
		fmt.Fprintf(w, "kept     %s (already names this hive)\n", res.Config)
	}
	if res.Git != nil {
		printSetup(a, *res.Git, false)
	}
	fmt.Fprintf(w, "\nEvery memminer command of this user now finds the hive %s.\n", res.Hive)
	fmt.Fprintf(w, "Next, start the daemon as a service that mines it (or memminer run, in the foreground):\n  %s\n", res.Next[0])
	fmt.Fprintf(w, "then give each agent its memory (%s):\n  %s\n", strings.Join(connect.AgentIDs(), ", "), res.Next[1])
}
