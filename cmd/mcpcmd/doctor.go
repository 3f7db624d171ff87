package mcpcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/conversations/mcptools"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/safehttp"
)

// Probe is agentd doctor's MCP line: every MCP server an agent (not
// inactive) names is connected to and listed, as a turn would, within
// timeout each. It returns how many answered and a line per one that did
// not ("agent Orders: crm: MCP server unreachable: ..."), never a header.
func Probe(open Open, allowPrivate bool, timeout time.Duration) func(ctx context.Context) (int, []string, error) {
	return func(ctx context.Context) (ok int, failed []string, err error) {
		err = open(ctx, func(f *features.Set) error {
			as, err := f.Stores.Agents.WithMCPTools(ctx)
			if err != nil {
				return err
			}
			c := mcptools.New(mcptools.Options{Guard: safehttp.New(safehttp.Options{AllowPrivate: allowPrivate}), Timeout: timeout})
			defer c.Close()
			for _, a := range as {
				servers, bad := agents.MCPServers(f.Stores.Secrets, a.Tools)
				for _, name := range bad {
					failed = append(failed, fmt.Sprintf("agent %s: %s: its headers cannot be decrypted", a.Name, name))
				}
				for _, s := range servers {
					_, err := c.Tools(ctx, mcptools.Server{Name: s.Name, URL: s.URL, Headers: s.Headers, AllowedTools: s.AllowedTools})
					if err != nil {
						failed = append(failed, fmt.Sprintf("agent %s: %s: %v", a.Name, s.Name, err))
						continue
					}
					ok++
				}
			}
			return nil
		})
		return ok, failed, err
	}
}
