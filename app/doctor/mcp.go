package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentd/agentd/storage/sqldb"
)

// mcp is a warning, never a failure, when an MCP server an agent uses does
// not answer: its turns go on without its tools (and say so).
func (r *run) mcp(ctx context.Context) (Status, string) {
	if r.in.MCP == nil {
		return Skip, "not checked"
	}
	if !sqldb.IsPostgresURL(r.in.DBPath) && (!r.haveState || len(r.state.Pending) > 0 || len(r.state.Newer) > 0) {
		return Skip, "no database at the current migration to read agents from"
	}
	ok, failed, err := r.in.MCP(ctx)
	switch {
	case err != nil:
		return Warn, "agents' MCP servers not checked: " + oneLine(err)
	case len(failed) > 0:
		return Warn, fmt.Sprintf("%d of %d MCP servers did not answer (their tools are left out of turns): %s",
			len(failed), ok+len(failed), strings.Join(failed, "; "))
	case ok == 0:
		return OK, "no agent uses an MCP server"
	}
	return OK, fmt.Sprintf("%d MCP servers listed their tools", ok)
}
