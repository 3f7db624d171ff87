package cmd

import (
	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app"
)

// addKBFlags adds the knowledge-base flags of serve (embedder, worker).
func addKBFlags(c *cobra.Command, cfg *app.KBConfig) {}

// kbCommands are the knowledge commands (collection, reindex).
func kbCommands(g *globals) []*cobra.Command { return nil }
