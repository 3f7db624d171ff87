// Package mcp serves agentd's MCP server (app/mcp) at /mcp: streamable
// HTTP, stateless (each POST is a whole exchange, so nothing is kept per
// client between requests), JSON answers. The route's authentication (the
// API key as Bearer or x-api-key, its rate limit) runs first; the key's
// organization and role go to the tools as the SDK's token information,
// and each tool checks the capability it needs.
package mcp

import (
	"context"
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/api/httpx"
	agentdmcp "github.com/agentd/agentd/app/mcp"
	"github.com/agentd/agentd/internal/errs"
)

// BodyLimit bounds a request to /mcp: the largest tool arguments and the
// JSON-RPC envelope.
const BodyLimit = agentdmcp.MaxArguments + 64<<10

// Handlers serve /mcp.
type Handlers struct{ h http.Handler }

// New serves srv.
func New(srv *sdk.Server) *Handlers {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, MaxRequestBodyBytes: BodyLimit,
		// Every request carries an API key (no cookie is accepted here), so a
		// rebound name gains a page nothing; and behind a proxy on the same
		// host the Host header is the public name.
		DisableLocalhostProtection: true,
	})
	// The SDK reads who calls from its token information: the principal
	// the route's authentication found, whatever header carried the key.
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p := httpx.PrincipalOf(r.Context())
		return agentdmcp.TokenInfo(agentdmcp.Principal{KeyID: p.KeyID, OrgID: p.OrgID, Role: p.Role}), nil
	}
	return &Handlers{h: auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)}
}

// Serve answers POST, GET and DELETE /mcp.
func (h *Handlers) Serve(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	p := httpx.PrincipalOf(r.Context())
	if p.OrgID == "" {
		return errs.New(errs.Forbidden, "/mcp needs an organization's API key (not the internal service key)")
	}
	if r.Header.Get("Authorization") == "" { // the key came in x-api-key
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer mcp")
	}
	h.h.ServeHTTP(w, r)
	return nil
}
