package cmd

import "github.com/spf13/cobra"

// agentCommands are the agent commands (agent create|list|get|update|delete).
func agentCommands(g *globals) []*cobra.Command { return nil }
