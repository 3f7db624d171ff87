// Package cliflags is how agentd's commands read their flags: each falls
// back to its AGENTD_* variable (named in its usage as "(env AGENTD_X)"),
// a flag beats its variable, and every value that does not parse, given
// by flag or by variable, stops the command naming it (all at once).
package cliflags

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Errors are the flag values of one command line that did not parse.
type Errors struct{ errs []error }

// CollectErrors makes every flag value record a value that does not
// parse and let parsing go on, so that two bad flags are both named (pflag
// stops at the first); the root's pre-run hook reports them together.
func CollectErrors(c *cobra.Command, bad *Errors) {
	wrap := func(f *pflag.Flag) {
		if _, done := f.Value.(*lenientValue); !done {
			f.Value = &lenientValue{Value: f.Value, flag: f, bad: bad}
		}
	}
	c.Flags().VisitAll(wrap)
	c.PersistentFlags().VisitAll(wrap)
	for _, sub := range c.Commands() {
		CollectErrors(sub, bad)
	}
}

// lenientValue is a flag value that records its parse error instead of
// returning it.
type lenientValue struct {
	pflag.Value
	flag *pflag.Flag
	bad  *Errors
}

func (v *lenientValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		v.bad.errs = append(v.bad.errs, ParseError("--"+v.flag.Name, v.flag, s, err))
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

// WrapErrors makes flag errors point at the command's help, and words a
// flag value that does not parse like an AGENTD_* one.
func WrapErrors(root *cobra.Command) *cobra.Command {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			err = ParseError("--"+bad.GetFlag().Name, bad.GetFlag(), bad.GetValue(), errors.Unwrap(bad))
		}
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	return root
}

// String, Int, Float, Bool and Duration give a flag its default from its AGENTD_* variable, so
// --help shows the value in force. A value that does not parse leaves the
// built-in default here; ApplyEnv then stops the command, naming it.

func String(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func Int(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func Float(name string, def float64) float64 {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return n
		}
	}
	return def
}

func Bool(name string, def bool) bool {
	if v, ok := os.LookupEnv(name); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

func Duration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

// EnvRef finds the variable a flag reads, from the "(env AGENTD_X)" its
// usage ends with: the help text is the one place that pairs them.
var EnvRef = regexp.MustCompile(`\(env (AGENTD_[A-Z0-9_]+)\)`)

// ApplyEnv sets every flag the command line left alone from its AGENTD_*
// variable (flag beats env beats default) and returns one error per value
// that does not parse, naming the variable and the value.
func ApplyEnv(fs *pflag.FlagSet) error {
	var bad []error
	fs.VisitAll(func(f *pflag.Flag) {
		m := EnvRef.FindStringSubmatch(f.Usage)
		if m == nil || f.Changed {
			return
		}
		v, ok := os.LookupEnv(m[1])
		if !ok {
			return
		}
		if err := strictValue(f).Set(v); err != nil {
			bad = append(bad, ParseError(m[1], f, v, err))
		}
	})
	return errors.Join(bad...)
}

// ParseError words a value of flag f, given as name (a variable or
// --flag), that does not parse: `AGENTD_X: invalid integer "1O"`.
func ParseError(name string, f *pflag.Flag, value string, cause error) error {
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

// NewChoice is a string flag value, default def, that takes what check allows.
func NewChoice(p *string, def string, check func(string) error) *choice {
	*p = def
	return &choice{p: p, check: check}
}

// OneOf is a choice among fixed words (case-insensitive), default def.
func OneOf(p *string, def string, words ...string) *choice {
	return NewChoice(p, def, func(v string) error {
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

// retriesFlag is a count of retries where 0 means none. The embedder reads
// 0 as "the default, 5" (a zero Config is the default one), so 0 typed on
// the command line or in the environment is stored as -1, none.
type retriesFlag struct{ n *int }

func NewRetries(n *int, def int) retriesFlag {
	f := retriesFlag{n}
	f.set(def)
	return f
}

func (f retriesFlag) set(v int) {
	if v <= 0 {
		v = -1
	}
	*f.n = v
}

func (f retriesFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a count of retries", s)
	}
	f.set(v) // a negative count, as before, is none too
	return nil
}

func (f retriesFlag) String() string {
	if f.n == nil || *f.n < 0 {
		return "0"
	}
	return strconv.Itoa(*f.n)
}

func (f retriesFlag) Type() string { return "int" }

// Failed reports the values that did not parse, joined (nil: none).
func (e *Errors) Failed() error { return errors.Join(e.errs...) }
