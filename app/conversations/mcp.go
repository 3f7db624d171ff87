package conversations

import (
	"context"
	"errors"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/conversations/mcptools"
)

// An agent's mcp tools (issue 38): the tools of each MCP server its tools
// name, listed when a turn needs them (mcptools keeps the list a minute),
// offered as mcp_<server>_<tool> beside the url tools and called within
// the same bounds (the tool timeout, 64 KB, the calls per answer and turn).

// mcpTool is where an offered mcp tool is called.
type mcpTool struct {
	server mcptools.Server
	tool   string
}

// addMCPTools adds the agent's mcp tools to ours under names no other tool
// has. A server that cannot be reached or listed is left out and named in
// the notes the turn's transcript keeps; the turn goes on without it.
func (s *Service) addMCPTools(ctx context.Context, in runInput, ours map[string]agentTool) []ToolCall {
	if s.d.MCP == nil {
		return nil
	}
	servers, bad := agents.MCPServers(s.d.Secrets, in.agent.Tools)
	var notes []ToolCall
	for _, name := range bad {
		notes = append(notes, mcpNote(name, "its headers cannot be decrypted (was the secret key changed?)"))
	}
	taken := func(n string) bool {
		if _, ok := ours[n]; ok || n == toolSearchKnowledge || n == toolSearchListings {
			return true
		}
		for _, t := range in.callerTools {
			if t.Name == n {
				return true
			}
		}
		return false
	}
	for _, sv := range servers {
		srv := mcptools.Server{Name: sv.Name, URL: sv.URL, Headers: sv.Headers, AllowedTools: sv.AllowedTools}
		ts, err := s.d.MCP.Tools(ctx, srv)
		if err != nil {
			if ctx.Err() != nil {
				return notes
			}
			s.d.Log.WarnContext(ctx, "mcp server unreachable", "agent", in.agent.ID, "server", sv.Name, "err", err)
			notes = append(notes, mcpNote(sv.Name, err.Error()))
			continue
		}
		for _, t := range ts {
			fn := mcptools.Function(sv.Name, t.Name, taken)
			ours[fn] = agentTool{Name: fn, Description: t.Description, Parameters: mcptools.Parameters(t),
				mcp: &mcpTool{server: srv, tool: t.Name}}
		}
	}
	return notes
}

// mcpNote is the transcript's note of a server left out of a turn.
func mcpNote(server, why string) ToolCall {
	return ToolCall{ID: "mcp_unavailable_" + server, Name: "mcp:" + server,
		Result: toolError("MCP server %s is unavailable: %s; its tools were not offered this turn", server, why)}
}

// callMCP calls an mcp tool; every failure is a result the model reads.
func (s *Service) callMCP(ctx context.Context, t agentTool, args map[string]any) string {
	res, err := s.d.MCP.Call(ctx, t.mcp.server, t.mcp.tool, args)
	switch {
	case err != nil && ctx.Err() != nil:
		return toolError("canceled")
	case errors.Is(err, mcptools.ErrTimeout):
		return toolError("tool %s did not answer within %s", t.Name, s.cfg.ToolTimeout)
	case errors.Is(err, mcptools.ErrTooLarge):
		return toolError("tool %s answered more than 64 KB", t.Name)
	case err != nil:
		s.d.Log.WarnContext(ctx, "mcp tool failed", "tool", t.Name, "err", err)
		return toolError("tool %s could not be reached: %v", t.Name, err)
	case res.IsError:
		return toolError("%s", truncateRunes(res.Text, 2000))
	}
	return res.Text
}
