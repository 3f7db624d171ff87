package features

import (
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
