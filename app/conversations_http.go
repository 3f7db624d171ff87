package app

import (
	"context"

	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/convapi"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/safehttp"
)

// newConvAPI builds the conversation handlers (app/convapi) on this
// server's request helpers, so bodies decode and errors shape as elsewhere.
func (s *Server) newConvAPI() *convapi.Handlers {
	return convapi.New(convapi.Deps{Calls: s.db, Agents: s.db, Log: s.log, OrgID: orgID, ReadBody: readBody,
		Decode: decodeBytes, WriteData: s.writeV2, Status: func(err error) (int, string) {
			e := toError(err)
			return status(e), e.Message
		}})
}

// wireConversations builds the engine on the configured model, the
// knowledge base, listings and the forgery-guarded client that url tools
// are called through (the webhooks' address rules).
func (a *App) wireConversations(context.Context) error {
	model, err := llm.New(a.cfg.LLM)
	if err != nil {
		return err
	}
	guard := safehttp.New(safehttp.Options{AllowPrivate: a.cfg.Webhooks.AllowPrivate, Resolver: a.cfg.Webhooks.Resolver,
		MaxBody: conversations.MaxToolAnswer + 1})
	deps := conversations.Deps{Agents: a.db, Store: a.db.Conversations, Knowledge: a.srv.kb, Tools: guard, Log: a.log}
	if a.srv.listings.svc != nil {
		deps.Listings = a.srv.listings.svc
	}
	svc, err := conversations.New(deps, conversations.Config{Model: model, ContextTokens: a.cfg.LLM.ContextTokens})
	a.srv.conv.Use(svc)
	a.srv.analysis.UseTests(agenttest.Runner{Engine: svc, Judge: model}) // agent tests run through this engine
	return err
}
