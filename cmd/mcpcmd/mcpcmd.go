// Package mcpcmd is `agentd mcp`: agentd's MCP server (app/mcp) over stdio
// for an assistant on the same machine, acting as an API key (its own
// package keeps cmd under its size limit).
package mcpcmd

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
	agentdmcp "github.com/agentd/agentd/app/mcp"
)

// Commands is agentd mcp, added by main (cmd is at its size limit). It
// opens the database of the root's --db as the CLI does (workers off).
func Commands() []*cobra.Command {
	return []*cobra.Command{New(func(c *cobra.Command, fn func(*features.Set) error) error {
		f, err := features.Open(c.Context(), features.Config{DBPath: c.Flag("db").Value.String()})
		if err != nil {
			return err
		}
		defer f.Close()
		return fn(f)
	})}
}

// Open runs fn with the feature set over the database.
type Open func(c *cobra.Command, fn func(*features.Set) error) error

// New is the mcp command.
func New(open Open) *cobra.Command {
	var key string
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve agentd's MCP tools over stdio (for Claude Desktop and other local assistants)",
		Long: "agentd mcp speaks the Model Context Protocol on stdin and stdout: an assistant started with it\n" +
			"lists and calls agentd's tools (agents, knowledge, calls, campaigns, conversations) as the API key\n" +
			"given in --api-key or AGENTD_API_KEY: its organization and role decide, as on /mcp.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if key == "" {
				key = os.Getenv("AGENTD_API_KEY")
			}
			return open(c, func(f *features.Set) error {
				p, err := Principal(c.Context(), f, key, time.Now())
				if err != nil {
					return err
				}
				return Serve(c.Context(), f, p, c.Root().Version, c.InOrStdin(), c.OutOrStdout())
			})
		},
	}
	c.Flags().StringVar(&key, "api-key", "", "the API key the tools act as (default: $AGENTD_API_KEY)")
	return c
}

// Principal is the key's organization and role; a missing, unknown,
// revoked or expired key is refused.
func Principal(ctx context.Context, f *features.Set, key string, now time.Time) (agentdmcp.Principal, error) {
	if key == "" {
		return agentdmcp.Principal{}, errors.New("an API key is required: --api-key or AGENTD_API_KEY (make one with: agentd key create)")
	}
	if !access.WellFormedKey(key) {
		return agentdmcp.Principal{}, errors.New("the API key is not an agentd key (agd_...)")
	}
	h := sha256.Sum256([]byte(key))
	k, err := f.Stores.Orgs.LookupKey(ctx, h[:])
	if err != nil {
		return agentdmcp.Principal{}, fmt.Errorf("the API key is unknown or revoked")
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return agentdmcp.Principal{}, fmt.Errorf("the API key expired on %s", k.ExpiresAt.Format("2006-01-02"))
	}
	return agentdmcp.Principal{KeyID: k.KeyID, OrgID: k.OrgID, Role: k.Role}, nil
}

// Serve runs the MCP server as p on in and out until the client leaves or
// ctx ends.
func Serve(ctx context.Context, f *features.Set, p agentdmcp.Principal, version string, in io.Reader, out io.Writer) error {
	srv := agentdmcp.New(agentdmcp.Deps{Agents: f.Agents, Calls: f.Calls, KB: f.KB, Conversations: f.Conversations,
		Analysis: f.Analysis, Version: version}, agentdmcp.Options{Fixed: &p})
	err := srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
