package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/cmd/mcpcmd"
)

// addFeatureCommands adds each feature's commands; each feature owns its file.
func addFeatureCommands(root *cobra.Command, g *globals) {
	mcp := mcpcmd.New(func(ctx context.Context, fn func(*features.Set) error) error {
		return withSet(ctx, g, features.Config{}, fn)
	}, version)
	for _, cs := range [][]*cobra.Command{agentCommands(g), kbCommands(g), listingCommands(g), callCommands(g), webhookCommands(g),
		batchCommands(g), dncCommands(g), settingsCommands(g), widgetCommands(g), {mcp}} {
		root.AddCommand(cs...)
	}
}
