// Package cmd holds agentd's cobra commands: flag and environment wiring
// only; the work is done by app.
package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Set at build time with -ldflags "-X github.com/agentd/agentd/cmd.version=... -X ...commit=...".
var (
	version = "dev"
	commit  = ""
)

// globals are the flags every command shares.
type globals struct {
	db   string
	json bool
}

// NewRoot builds the agentd command tree.
func NewRoot() *cobra.Command {
	g := &globals{}
	bad := &flagErrors{}
	root := &cobra.Command{
		Use:           "agentd",
		Short:         "Self-hosted control plane for AI voice and chat agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command reads the AGENTD_* variables of its flags here, so a
		// value that does not parse stops it before it does any work.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if len(bad.errs) > 0 {
				return fmt.Errorf("%w (see '%s --help')", errors.Join(bad.errs...), c.CommandPath())
			}
			return applyEnv(c.Flags())
		},
	}
	root.PersistentFlags().StringVar(&g.db, "db", envString("AGENTD_DB", "./agentd.db"), "SQLite database file or postgres:// URL (env AGENTD_DB)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print JSON")
	root.AddCommand(newServe(g), newVersion(g), newOrg(g), newUser(g), newKey(g))
	addFeatureCommands(root, g)
	root.AddCommand(opsCommands(g)...)
	root.AddCommand(newMigrateDB(g))
	collectFlagErrors(root, bad)
	return wrapErrors(root)
}

// flagErrors are the flag values of one command line that did not parse.
type flagErrors struct{ errs []error }

// collectFlagErrors makes every flag value record a value that does not
// parse and let parsing go on, so that two bad flags are both named (pflag
// stops at the first); the root's pre-run hook reports them together.
func collectFlagErrors(c *cobra.Command, bad *flagErrors) {
	wrap := func(f *pflag.Flag) {
		if _, done := f.Value.(*lenientValue); !done {
			f.Value = &lenientValue{Value: f.Value, flag: f, bad: bad}
		}
	}
	c.Flags().VisitAll(wrap)
	c.PersistentFlags().VisitAll(wrap)
	for _, sub := range c.Commands() {
		collectFlagErrors(sub, bad)
	}
}

// lenientValue is a flag value that records its parse error instead of
// returning it.
type lenientValue struct {
	pflag.Value
	flag *pflag.Flag
	bad  *flagErrors
}

func (v *lenientValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		v.bad.errs = append(v.bad.errs, parseError("--"+v.flag.Name, v.flag, s, err))
	}
	return nil
}

// IsBoolFlag keeps --flag without a value working for boolean flags.
func (v *lenientValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// strictValue is the flag's own value, which returns its parse errors.
func strictValue(f *pflag.Flag) pflag.Value {
	if l, ok := f.Value.(*lenientValue); ok {
		return l.Value
	}
	return f.Value
}

// Execute runs the command tree and prints an error once, as "agentd: ...",
// on the command's stderr, whichever hook (PreRunE, RunE, flags) returned it.
func Execute(ctx context.Context, root *cobra.Command) error {
	c, err := root.ExecuteContextC(ctx)
	if err != nil {
		if c == nil {
			c = root
		}
		fmt.Fprintln(c.ErrOrStderr(), "agentd:", err)
	}
	return err
}

// wrapErrors makes flag errors point at the command's help, and words a
// flag value that does not parse like an AGENTD_* one.
func wrapErrors(root *cobra.Command) *cobra.Command {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			err = parseError("--"+bad.GetFlag().Name, bad.GetFlag(), bad.GetValue(), errors.Unwrap(bad))
		}
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	return root
}

func newVersion(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version and commit",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v, cm := buildVersion()
			if g.json {
				return printJSON(c.OutOrStdout(), map[string]string{"version": v, "commit": cm})
			}
			fmt.Fprintf(c.OutOrStdout(), "agentd %s (commit %s)\n", v, cm)
			return nil
		},
	}
}

// buildVersion is the version and commit, from ldflags or the build info.
func buildVersion() (string, string) {
	v, cm := version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && cm == "" {
				cm = s.Value
			}
		}
	}
	if cm == "" {
		cm = "unknown"
	}
	return v, cm
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// The env* helpers give a flag its default from its AGENTD_* variable, so
// --help shows the value in force. A value that does not parse leaves the
// built-in default here; applyEnv then stops the command, naming it.

func envString(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return n
		}
	}
	return def
}

func envBool(name string, def bool) bool {
	if v, ok := os.LookupEnv(name); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

// envRef finds the variable a flag reads, from the "(env AGENTD_X)" its
// usage ends with: the help text is the one place that pairs them.
var envRef = regexp.MustCompile(`\(env (AGENTD_[A-Z0-9_]+)\)`)

// applyEnv sets every flag the command line left alone from its AGENTD_*
// variable (flag beats env beats default) and returns one error per value
// that does not parse, naming the variable and the value.
func applyEnv(fs *pflag.FlagSet) error {
	var bad []error
	fs.VisitAll(func(f *pflag.Flag) {
		m := envRef.FindStringSubmatch(f.Usage)
		if m == nil || f.Changed {
			return
		}
		v, ok := os.LookupEnv(m[1])
		if !ok {
			return
		}
		if err := strictValue(f).Set(v); err != nil {
			bad = append(bad, parseError(m[1], f, v, err))
		}
	})
	return errors.Join(bad...)
}

// parseError words a value of flag f, given as name (a variable or
// --flag), that does not parse: `AGENTD_X: invalid integer "1O"`.
func parseError(name string, f *pflag.Flag, value string, cause error) error {
	switch f.Value.Type() {
	case "int", "int64", "uint", "uint64":
		return fmt.Errorf("%s: invalid integer %q", name, value)
	case "float64", "float32":
		return fmt.Errorf("%s: invalid number %q", name, value)
	case "bool":
		return fmt.Errorf("%s: invalid boolean %q (use true or false)", name, value)
	case "duration":
		return fmt.Errorf("%s: invalid duration %q (use a unit, e.g. 500ms, 30s, 5m)", name, value)
	}
	return fmt.Errorf("%s: invalid value %q: %v", name, value, cause)
}

// choice is a string flag that accepts only what check allows, so a bad
// --flag or AGENTD_* value stops the command when it is read.
type choice struct {
	p     *string
	check func(string) error
}

// newChoice is a string flag value, default def, that takes what check allows.
func newChoice(p *string, def string, check func(string) error) *choice {
	*p = def
	return &choice{p: p, check: check}
}

// oneOf is a choice among fixed words (case-insensitive), default def.
func oneOf(p *string, def string, words ...string) *choice {
	return newChoice(p, def, func(v string) error {
		for _, w := range words {
			if strings.EqualFold(v, w) {
				return nil
			}
		}
		return fmt.Errorf("use %s or %s", strings.Join(words[:len(words)-1], ", "), words[len(words)-1])
	})
}

// String is the current value, for --help.
func (c *choice) String() string { return *c.p }

// Type names the value in --help.
func (c *choice) Type() string { return "string" }

// Set keeps v if check allows it.
func (c *choice) Set(v string) error {
	if err := c.check(v); err != nil {
		return err
	}
	*c.p = v
	return nil
}
