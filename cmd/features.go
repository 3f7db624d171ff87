package cmd

import "github.com/spf13/cobra"

// addFeatureCommands adds each feature's commands; each feature owns its file.
func addFeatureCommands(root *cobra.Command, g *globals) {
	for _, cs := range [][]*cobra.Command{agentCommands(g), kbCommands(g), listingCommands(g), callCommands(g), webhookCommands(g),
		batchCommands(g), dncCommands(g), settingsCommands(g), widgetCommands(g), {newMCP(g)}} {
		root.AddCommand(cs...)
	}
}
