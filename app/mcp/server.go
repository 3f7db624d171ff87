// Package mcp is agentd as a Model Context Protocol server (issue 38): the
// tools and resources an operator's assistant uses, over the same feature
// services as the HTTP API, so each tool validates like its HTTP twin and
// answers the same messages (as MCP tool errors). It speaks no HTTP: the
// API serves the server at /mcp (app/api/mcp) and `agentd mcp` over stdio.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/errs"
)

// Deps are the feature services the tools call (any may be nil: its tools
// then answer that the feature is not running).
type Deps struct {
	Agents        *agents.Service
	Calls         *calls.Service
	KB            *kb.Service
	Conversations *conversations.Service
	Analysis      *analysis.Service
	Log           *slog.Logger
	// Version is agentd's, shown to clients.
	Version string
}

// Principal is who calls: the API key's organization and role.
type Principal struct {
	KeyID    string
	OrgID    string
	Role     string
	Internal bool // the internal service key (schedule_call only, like its twin)
}

// Can reports whether the principal's role holds capability.
func (p Principal) Can(capability string) bool { return access.Can(p.Role, capability) }

const principalKey = "agentd.principal"

// TokenInfo is the SDK's token information for a principal the HTTP layer
// authenticated: the key's id binds a session to the key that opened it.
func TokenInfo(p Principal) *auth.TokenInfo {
	return &auth.TokenInfo{UserID: p.KeyID, Extra: map[string]any{principalKey: p}}
}

// Options choose how a server learns who calls.
type Options struct {
	// Fixed is the principal of every request when the transport carries
	// no token (stdio: the key given to `agentd mcp`).
	Fixed *Principal
}

// Server is the MCP server over the features.
type Server struct {
	d     Deps
	fixed *Principal
}

// New builds the MCP server with agentd's tools and resources.
func New(d Deps, o Options) *sdk.Server {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{d: d, fixed: o.Fixed}
	version := d.Version
	if version == "" {
		version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "agentd", Version: version}, &sdk.ServerOptions{
		Instructions: "agentd: manage voice and chat agents, their knowledge, calls, campaigns and conversations. " +
			"Every tool acts in the organization of the API key; a viewer key may read only.",
	})
	for _, t := range s.tools() {
		srv.AddTool(t.tool, s.handler(t))
	}
	s.addResources(srv)
	return srv
}

// principal is who makes the request: the token the HTTP layer set, or the
// fixed principal of stdio.
func (s *Server) principal(extra *sdk.RequestExtra) (Principal, error) {
	if extra != nil && extra.TokenInfo != nil {
		if p, ok := extra.TokenInfo.Extra[principalKey].(Principal); ok && p.OrgID != "" {
			return p, nil
		}
	}
	if s.fixed != nil {
		return *s.fixed, nil
	}
	return Principal{}, errs.New(errs.Unauthenticated, "an API key is required")
}

// toolError is err as an MCP tool error: the feature's client message,
// never the details of an internal failure (logged instead).
func (s *Server) toolError(ctx context.Context, tool string, err error) *sdk.CallToolResult {
	msg := Message(err)
	if errs.KindOf(err) == errs.Internal {
		s.d.Log.ErrorContext(ctx, "mcp tool failed", "tool", tool, "err", err)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// Message is what a client is told of err: the message of an *errs.Error
// (its kind first when it is not bad input), "internal error" otherwise.
func Message(err error) string {
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind == errs.Internal {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return "canceled: the request ended before the tool finished"
		}
		return "internal error"
	}
	if e.Kind == errs.Invalid {
		return e.Message
	}
	return e.Kind.String() + ": " + e.Message
}

// result is a tool's answer: the value as JSON text and as structured
// content, the way the HTTP twin's data reads.
func result(v any) (*sdk.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b)}, nil
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
