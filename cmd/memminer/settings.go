package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memminer/memminer/config"
)

// settingAnnotation marks a flag made from a setting; its value is the
// setting's config key.
const settingAnnotation = "memminer/setting"

// settingFlags adds to fs the flags of the settings with the given config
// keys, as config's table declares them. resolve applies the ones given
// over the config file and the environment.
func settingFlags(fs *pflag.FlagSet, keys ...string) {
	for _, key := range keys {
		s, ok := config.Lookup(key)
		if !ok || s.Flag == "" {
			panic("settingFlags: no flag for setting " + key)
		}
		fs.Var(&settingValue{s: s}, s.Flag, flagHelp(s))
		f := fs.Lookup(s.Flag)
		f.Annotations = map[string][]string{settingAnnotation: {key}}
		if s.IsBool() {
			f.NoOptDefVal = "true"
		}
	}
}

// flagHelp is a setting's flag help: what it is, then where else it is
// set and its default.
func flagHelp(s config.Setting) string {
	if s.FlagNegates {
		return s.FlagHelp + " (env " + s.Env + "=false, config " + s.Key + ": false)"
	}
	help := s.Help + " (env " + s.Env + ", config " + s.Key + ":"
	if s.Default != "" {
		help += ", default " + s.Default
	}
	return help + ")"
}

// applySettingFlags sets each setting whose flag was given on fs over cfg.
func applySettingFlags(cfg *config.Config, fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		key := settingKey(f)
		if key == "" || err != nil {
			return
		}
		err = cfg.Set(key, f.Value.(*settingValue).text)
	})
	return err
}

// settingKey is the config key of the setting f sets, or "".
func settingKey(f *pflag.Flag) string {
	if keys := f.Annotations[settingAnnotation]; len(keys) == 1 {
		return keys[0]
	}
	return ""
}

// settingFrom names where cmd's value of the setting key came from: its
// flag ("--hive"), its environment variable, or else its config key (the
// config file, or the default). A nil cmd is a command without the flag.
func (a *app) settingFrom(cmd *cobra.Command, key string) string {
	s, _ := config.Lookup(key)
	if cmd != nil && s.Flag != "" && cmd.Flags().Changed(s.Flag) {
		return "--" + s.Flag
	}
	if a.getenv(s.Env) != "" {
		return s.Env
	}
	return s.Key
}

// settingAdvice turns a config error into one that says how to fix it.
func settingAdvice(cmd *cobra.Command, err error) error {
	var se *config.Error
	if errors.As(err, &se) && errors.Is(err, config.ErrNotSet) {
		return fmt.Errorf("%w; %s", err, howToSet(cmd, se.Key))
	}
	return err
}

// howToSet tells a person how to set the setting key when running cmd.
func howToSet(cmd *cobra.Command, key string) string {
	s, _ := config.Lookup(key)
	var ways []string
	if s.Flag != "" && cmd.Flags().Lookup(s.Flag) != nil {
		ways = append(ways, "pass --"+s.Flag)
	}
	ways = append(ways, "set "+s.Env, "or put "+s.Key+": in the config file")
	return strings.Join(ways, ", ")
}

// settingValue is a flag's text, checked by the setting's parser when the
// flag is parsed, so a bad value is a usage error naming the flag.
type settingValue struct {
	s    config.Setting
	text string // what the flag sets the setting to
}

func (v *settingValue) Set(text string) error {
	if v.s.FlagNegates {
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		text = strconv.FormatBool(!b)
	}
	if err := v.s.Check(text); err != nil {
		return err
	}
	v.text = text
	return nil
}

// String is the flag's value; empty until it is given, so pflag shows no
// default of its own: flagHelp states the setting's.
func (v *settingValue) String() string { return v.text }

func (v *settingValue) Type() string { return v.s.TypeName() }

// IsBoolFlag lets a true-or-false flag be given without a value.
func (v *settingValue) IsBoolFlag() bool { return v.s.IsBool() }

// dryRunFlag gives fs --dry-run, the one flag that previews a command's
// change without making it, and the flags it was called before (old) as
// hidden aliases of it.
func dryRunFlag(fs *pflag.FlagSet, p *bool, help string, old ...string) {
	fs.BoolVar(p, "dry-run", false, help)
	for _, name := range old {
		fs.BoolVar(p, name, false, help+" (old name of --dry-run)")
		if err := fs.MarkHidden(name); err != nil {
			panic(err)
		}
	}
}
