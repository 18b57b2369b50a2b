package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/hive"
)

// installedFlags are the flags every command connect installs (hooks, MCP
// server) carries: --wing, and each setting connect resolved that the
// installed command would not find by itself — the hive, however it was
// found (flag, MEMMINER_HIVE, config, the serving daemon), the palace and
// model when a flag or variable chose them, and --config when given.
// An agent client starts those commands without this shell's environment,
// so a setting left out would be lost: MCP's remember failed with "no hive"
// while connect had written the hive into the protocol text.
func (a *app) installedFlags(cmd *cobra.Command) ([]string, error) {
	flags := []string{"--wing", a.cfg.Wing}
	if a.cfg.Hive != "" {
		hive, err := filepath.Abs(a.cfg.Hive)
		if err != nil {
			return nil, err
		}
		flags = append(flags, "--hive", hive)
	}
	if a.settingFrom(cmd, "palace") != "palace" {
		flags = append(flags, "--palace", a.cfg.Palace)
	}
	if a.settingFrom(cmd, "model") != "model" {
		flags = append(flags, "--model", a.cfg.Model)
	}
	if a.configFile != "" {
		file, err := filepath.Abs(a.configFile)
		if err != nil {
			return nil, err
		}
		flags = append(flags, "--config", file)
	}
	return flags, nil
}

// installedProblems says what the commands connect installed for conn
// (its hooks and MCP server) cannot reach. They run with the flags connect
// wrote and the config file, and are taken to have none of this shell's
// MEMMINER_ variables (the client that starts them may well not). A
// connection recorded before connect kept its flags is not checked.
func (a *app) installedProblems(conn connectedAgent) []string {
	if conn.flags == nil {
		return nil
	}
	env := func(k string) string {
		if strings.HasPrefix(k, "MEMMINER_") {
			return ""
		}
		return a.getenv(k)
	}
	file, sets := "", map[string]string{}
	for i := 0; i+1 < len(conn.flags); i += 2 {
		name, v := strings.TrimPrefix(conn.flags[i], "--"), conn.flags[i+1]
		if name == "config" {
			file = v
		}
		for _, s := range config.Settings() {
			if s.Flag != "" && s.Flag == name {
				sets[s.Key] = v
			}
		}
	}
	who := conn.Agent + "'s MCP server and hooks"
	cfg, err := loadConfig(env, file)
	if err != nil {
		return []string{fmt.Sprintf("%s cannot load their settings: %v", who, err)}
	}
	for key, v := range sets {
		if err := cfg.Set(key, v); err != nil {
			return []string{fmt.Sprintf("%s: %v", who, err)}
		}
	}
	var problems []string
	if cfg.Hive == "" {
		problems = append(problems, who+" find no hive (remember fails with \"no hive\")")
	} else if _, err := os.Stat(filepath.Join(cfg.Hive, hive.DefaultDir)); err != nil {
		problems = append(problems, fmt.Sprintf("%s use the hive %s: %v", who, cfg.Hive, err))
	}
	if abs, err := filepath.Abs(cfg.Palace); err == nil && !namesOneFile(abs, a.cfg.Palace) {
		problems = append(problems, fmt.Sprintf("%s use the palace %s, not %s", who, abs, a.cfg.Palace))
	}
	return problems
}
