package cmd

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/features"
	agentdmcp "github.com/agentd/agentd/app/mcp"
)

// newMCP is `agentd mcp`: app/mcp over stdio, as an API key.
func newMCP(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "mcp", Args: cobra.NoArgs, Short: "Serve agentd's MCP tools over stdio for a local assistant (Claude Desktop...), as --api-key or AGENTD_API_KEY"}
	key := c.Flags().String("api-key", os.Getenv("AGENTD_API_KEY"), "the API key the tools act as: its organization and role decide (env AGENTD_API_KEY)")
	c.RunE = func(c *cobra.Command, _ []string) error {
		return withSet(c.Context(), g, features.Config{}, func(f *features.Set) error {
			p, err := agentdmcp.KeyPrincipal(c.Context(), f.Stores.Orgs, *key, time.Now())
			if err != nil {
				return err
			}
			return agentdmcp.Stdio(c.Context(), agentdmcp.Deps{Agents: f.Agents, Calls: f.Calls, KB: f.KB, Conversations: f.Conversations,
				Analysis: f.Analysis, Version: version}, p, c.InOrStdin(), c.OutOrStdout())
		})
	}
	return c
}
