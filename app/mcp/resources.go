package mcp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/internal/errs"
)

// Resources: the agents (a list and each one) and each call, as JSON, for
// an assistant that attaches them to a prompt rather than call a tool.
const (
	uriAgents = "agentd://agents"
	uriAgent  = "agentd://agents/{id}"
	uriCall   = "agentd://calls/{id}"
)

func (s *Server) addResources(srv *sdk.Server) {
	srv.AddResource(&sdk.Resource{URI: uriAgents, Name: "agents", MIMEType: "application/json",
		Description: "The organization's agents (first 100, newest first)"}, s.readAgents)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: uriAgent, Name: "agent", MIMEType: "application/json",
		Description: "One agent with its instructions, config and tools"}, s.readAgent)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: uriCall, Name: "call", MIMEType: "application/json",
		Description: "One call with its transcript, outcome and analysis"}, s.readCall)
}

// readable is the principal of a resource read, which needs agent:read.
func (s *Server) readable(req *sdk.ReadResourceRequest) (Principal, error) {
	p, err := s.principal(req.Extra)
	if err == nil && !p.Can(access.CapAgentRead) {
		err = errs.New(errs.Forbidden, "this key's role lacks the agent:read capability")
	}
	return p, err
}

// contents is v as the JSON contents of uri; a feature's "not found" is
// the protocol's resource-not-found error.
func contents(uri string, v any, err error) (*sdk.ReadResourceResult, error) {
	if errs.Is(err, errs.NotFound) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, &resourceError{msg: Message(err)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// resourceError carries only the client message over the protocol.
type resourceError struct{ msg string }

func (e *resourceError) Error() string { return e.msg }

func (s *Server) readAgents(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	p, err := s.readable(req)
	if err != nil {
		return contents(req.Params.URI, nil, err)
	}
	as, _, err := s.d.Agents.List(ctx, p.OrgID, agents.Query{Limit: 100})
	return contents(req.Params.URI, agents.NewViews(as), err)
}

// idOf is the last path segment of a resource URI under prefix.
func idOf(uri, prefix string) string {
	id, ok := strings.CutPrefix(uri, prefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

func (s *Server) readAgent(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	p, err := s.readable(req)
	if err != nil {
		return contents(req.Params.URI, nil, err)
	}
	id := idOf(req.Params.URI, "agentd://agents/")
	if id == "" {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	a, err := s.d.Agents.Get(ctx, p.OrgID, id)
	return contents(req.Params.URI, agents.NewView(a), err)
}

func (s *Server) readCall(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	p, err := s.readable(req)
	if err != nil {
		return contents(req.Params.URI, nil, err)
	}
	id := idOf(req.Params.URI, "agentd://calls/")
	if id == "" || s.d.Calls == nil {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	v, err := s.call(ctx, p.OrgID, id)
	return contents(req.Params.URI, v, err)
}
