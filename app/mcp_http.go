package app

import (
	"context"
	"net/http"
	"sync"

	"github.com/julienschmidt/httprouter"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/errs"
	agentdmcp "github.com/agentd/agentd/app/mcp"
)

// /mcp serves agentd's MCP server (app/mcp): streamable HTTP, stateless
// (each POST is a whole exchange: nothing is kept per client), JSON
// answers. The route's authentication (the key as Bearer or x-api-key, its
// rate limit) runs first; the key's organization and role reach the tools
// as the SDK's token information, and each tool checks its capability.

// mcpBodyLimit bounds a request: the largest tool arguments and the
// JSON-RPC envelope.
const mcpBodyLimit = agentdmcp.MaxArguments + 64<<10

// mcpState is the handler, built on first use (the features are wired
// after the routes).
type mcpState struct {
	once sync.Once
	h    http.Handler
}

func (s *Server) mcpHandler() http.Handler {
	s.mcp.once.Do(func() {
		f := s.f
		srv := agentdmcp.New(agentdmcp.Deps{Agents: f.Agents, Calls: f.Calls, KB: f.KB, Conversations: f.Conversations,
			Analysis: f.Analysis, Log: s.log, Version: s.cfg.Version}, agentdmcp.Options{})
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
			Stateless: true, JSONResponse: true, MaxRequestBodyBytes: mcpBodyLimit,
			// Every request carries an API key (no cookie is taken here), so a
			// rebound name gains a page nothing; behind a proxy on the same
			// host the Host header is the public name.
			DisableLocalhostProtection: true,
		})
		verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
			p := principalFrom(r.Context())
			return agentdmcp.TokenInfo(agentdmcp.Principal{KeyID: p.KeyID, OrgID: p.OrgID, Role: p.Role}), nil
		}
		s.mcp.h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	})
	return s.mcp.h
}

// serveMCP is POST /mcp.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	p := principalFrom(r.Context())
	if p.OrgID == "" {
		return errs.New(errs.Forbidden, "/mcp needs an organization's API key, not the internal service key")
	}
	if r.Header.Get("Authorization") == "" { // the key came in x-api-key
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer mcp")
	}
	s.mcpHandler().ServeHTTP(w, r)
	return nil
}
