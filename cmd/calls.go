package cmd

import (
	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app"
)

// addCallFlags adds the dial queue and dialer flags of serve.
func addCallFlags(c *cobra.Command, cfg *app.CallsConfig) {}

// callCommands are the call commands (calls list|get|cancel).
func callCommands(g *globals) []*cobra.Command { return nil }
