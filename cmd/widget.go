package cmd

import (
	"fmt"

	"github.com/agentd/agentd/app/features"
	"github.com/spf13/cobra"
)

// widgetCommands are `agentd widget ...`: the chat widget's signing key.
func widgetCommands(g *globals) []*cobra.Command {
	root := &cobra.Command{Use: "widget", Short: "Manage the chat widget (its visitor token signing key)"}
	root.AddCommand(&cobra.Command{
		Use:   "rotate-secret",
		Short: "Replace the key visitor tokens are signed with (every widget conversation starts over)",
		Long: `rotate-secret replaces the server-wide key that signs the chat widget's visitor tokens,
kept in the database. Every token signed with the old key stops working (within a minute
on a running server, which reads the key again every minute), and each widget starts a new
conversation on its next message. Use it when a key may have leaked.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withSet(c.Context(), g, features.Config{}, func(f *features.Set) error {
				if err := f.Widget.RotateSecret(c.Context()); err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"rotated": true})
				}
				fmt.Fprintln(c.OutOrStdout(), "widget signing key rotated; visitor tokens signed with the old one stop working within a minute")
				return nil
			})
		},
	})
	return []*cobra.Command{root}
}
