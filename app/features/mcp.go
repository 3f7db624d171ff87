package features

import (
	"context"
	"fmt"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/conversations/mcptools"
	"github.com/agentd/agentd/internal/safehttp"
)

// openMCP is the client of the agents' mcp tools: through the same forgery
// guard as url tools, closed with the set.
func (s *Set) openMCP(cfg Config) *mcptools.Client {
	guard := safehttp.New(safehttp.Options{AllowPrivate: cfg.Webhooks.AllowPrivate, Resolver: cfg.Webhooks.Resolver})
	c := mcptools.New(mcptools.Options{Guard: guard, Log: s.log, Timeout: cfg.LLM.ToolTimeout})
	s.closers = append(s.closers, func() error { c.Close(); return nil })
	return c
}

// ProbeMCP is agentd doctor's MCP line: it opens the database at path and
// connects to and lists every MCP server an agent (not inactive) names, as
// a turn would, within timeout each. It returns how many answered and a
// line per one that did not ("agent Orders: crm: MCP server unreachable:
// ..."), never a header value.
func ProbeMCP(path string, allowPrivate bool, timeout time.Duration) func(ctx context.Context) (int, []string, error) {
	return func(ctx context.Context) (ok int, failed []string, err error) {
		s, err := Open(ctx, Config{DBPath: path})
		if err != nil {
			return 0, nil, err
		}
		defer s.Close()
		as, err := s.Stores.Agents.WithMCPTools(ctx)
		if err != nil {
			return 0, nil, err
		}
		c := mcptools.New(mcptools.Options{Guard: safehttp.New(safehttp.Options{AllowPrivate: allowPrivate}), Timeout: timeout})
		defer c.Close()
		for _, a := range as {
			servers, bad := agents.MCPServers(s.Stores.Secrets, a.Tools)
			for _, name := range bad {
				failed = append(failed, fmt.Sprintf("agent %s: %s: its headers cannot be decrypted", a.Name, name))
			}
			for _, sv := range servers {
				if _, err := c.Tools(ctx, mcptools.Server{Name: sv.Name, URL: sv.URL, Headers: sv.Headers, AllowedTools: sv.AllowedTools}); err != nil {
					failed = append(failed, fmt.Sprintf("agent %s: %s: %v", a.Name, sv.Name, err))
					continue
				}
				ok++
			}
		}
		return ok, failed, nil
	}
}
