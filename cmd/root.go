// Package cmd holds agentd's cobra commands: flag and environment wiring
// only; the work is done by app.
package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/agentd/agentd/cmd/cliflags"
	"github.com/spf13/cobra"
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
	bad := &cliflags.Errors{}
	root := &cobra.Command{
		Use:           "agentd",
		Short:         "Self-hosted control plane for AI voice and chat agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command reads the AGENTD_* variables of its flags here, so a
		// value that does not parse stops it before it does any work.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := bad.Failed(); err != nil {
				return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
			}
			return cliflags.ApplyEnv(c.Flags())
		},
	}
	root.PersistentFlags().StringVar(&g.db, "db", cliflags.String("AGENTD_DB", "./agentd.db"), "SQLite database file or postgres:// URL (env AGENTD_DB)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print JSON")
	root.AddCommand(newServe(g), newVersion(g), newOrg(g), newUser(g), newKey(g))
	addFeatureCommands(root, g)
	root.AddCommand(opsCommands(g)...)
	root.AddCommand(newMigrateDB(g))
	cliflags.CollectErrors(root, bad)
	return cliflags.WrapErrors(root)
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
