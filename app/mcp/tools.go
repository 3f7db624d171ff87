package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/analysisstore"
)

// tool is one agentd tool: what it needs of the key and what it does.
type tool struct {
	tool       *sdk.Tool
	capability string
	run        func(ctx context.Context, p Principal, args json.RawMessage) (any, error)
}

// def builds a tool; schema is its arguments' JSON Schema.
func def(name, desc, capability, schema string, readOnly bool, run func(context.Context, Principal, json.RawMessage) (any, error)) tool {
	t := &sdk.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: readOnly}}
	return tool{tool: t, capability: capability, run: run}
}

// handler checks the principal and its role, then runs the tool; every
// failure is a tool error with the HTTP twin's message.
func (s *Server) handler(t tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, err := s.principal(req.Extra)
		if err != nil {
			return s.toolError(ctx, t.tool.Name, err), nil
		}
		if !p.Can(t.capability) {
			return s.toolError(ctx, t.tool.Name, errs.New(errs.Forbidden,
				"this key's role ("+p.Role+") lacks the "+t.capability+" capability")), nil
		}
		out, err := t.run(ctx, p, req.Params.Arguments)
		if err != nil {
			return s.toolError(ctx, t.tool.Name, err), nil
		}
		return result(out)
	}
}

// Schemas of the arguments: the HTTP twin's body or query fields.
const (
	schemaID         = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`
	schemaListAgents = `{"type":"object","properties":{"type":{"type":"string","enum":["voice","chat"]},"status":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100},"offset":{"type":"integer","minimum":0}}}`
	agentFields      = `"name":{"type":"string"},"type":{"type":"string","enum":["voice","chat"]},"status":{"type":"string"},"model":{"type":"string"},"instructions":{"type":"string"},"config":{"type":"object"},"tools":{"type":"array","items":{"type":"object"}},"phoneNumbers":{"type":"array","items":{"type":"string"}},"specialty":{"type":"string"},"displayRole":{"type":"string"},"knowledge":{"type":"object"},"fallback":{"type":"string"}`
	schemaCreate     = `{"type":"object","properties":{` + agentFields + `},"required":["name","type"]}`
	schemaUpdate     = `{"type":"object","properties":{"id":{"type":"string"},` + agentFields + `},"required":["id"]}`
	schemaSearch     = `{"type":"object","properties":{"collectionId":{"type":"string"},"query":{"type":"string"},"limit":{"type":"integer"},"mode":{"type":"string","enum":["hybrid","semantic","keyword"]},"alpha":{"type":"number"},"contentRole":{"type":"string"},"metadata":{"type":"object"}},"required":["collectionId","query"]}`
	schemaSource     = `{"type":"object","properties":{"collectionId":{"type":"string"},"externalId":{"type":"string"},"title":{"type":"string"},"content":{"type":"string"},"contentRole":{"type":"string"},"metadata":{"type":"object"}},"required":["collectionId","externalId","content"]}`
	schemaSchedule   = `{"type":"object","properties":{"agentId":{"type":"string"},"contactPhone":{"type":"string","description":"E.164"},"contactName":{"type":"string"},"contactEmail":{"type":"string"},"callerId":{"type":"string"},"scheduledAt":{"type":"string","description":"ISO 8601 with offset; absent: now"},"priority":{"type":"integer"},"maxRetries":{"type":"integer"},"retrySchedule":{"type":"array","items":{"type":"string"}},"callMetadata":{"type":"object"},"metadata":{"type":"object"}},"required":["agentId","contactPhone"]}`
	schemaOutbound   = `{"type":"object","properties":{"agentId":{"type":"string"},"phoneNumber":{"type":"string","description":"E.164"},"callerId":{"type":"string"},"metadata":{"type":"object"},"priority":{"type":"integer"},"ignoreCallingHours":{"type":"boolean"}},"required":["agentId","phoneNumber"]}`
	schemaListCalls  = `{"type":"object","properties":{"status":{"type":"string"},"agentId":{"type":"string"},"batchId":{"type":"string"},"limit":{"type":"integer"},"cursor":{"type":"string"}}}`
	schemaListConv   = `{"type":"object","properties":{"agentId":{"type":"string"},"status":{"type":"string","enum":["active","ended"]},"limit":{"type":"integer","minimum":1,"maximum":100},"offset":{"type":"integer","minimum":0}}}`
	schemaListBatch  = `{"type":"object","properties":{"status":{"type":"string"},"limit":{"type":"integer"},"cursor":{"type":"string"}}}`
)

// page wraps a list so every answer is a JSON object.
type page[T any] struct {
	Items T    `json:"items"`
	More  bool `json:"hasMore"`
	Total int  `json:"total,omitempty"`
}

// actioned is a campaign control's answer: the batch and the message.
type actioned struct {
	Batch   calls.BatchView `json:"batch"`
	Message string          `json:"message"`
}

// callView is read_call's answer: the call (with its transcript) and its
// analysis, as GET /api/v1/calls/{id} shows them.
type callView struct {
	calls.Record
	Analysis any `json:"analysis,omitempty"`
}

// tools is agentd's tool set.
func (s *Server) tools() []tool {
	return []tool{
		def("list_agents", "List the organization's agents, newest first (filter by type and status).", access.CapAgentRead, schemaListAgents, true, s.listAgents),
		def("get_agent", "Read one agent with its instructions, config and tools.", access.CapAgentRead, schemaID, true, s.getAgent),
		def("create_agent", "Create an agent (as POST /api/v1/agents).", access.CapAgentWrite, schemaCreate, false, s.createAgent),
		def("update_agent", "Update some fields of an agent (as PATCH /api/v1/agents/{id}).", access.CapAgentWrite, schemaUpdate, false, s.updateAgent),
		def("search_knowledge", "Search a knowledge collection (hybrid, semantic or keyword).", access.CapAgentRead, schemaSearch, true, s.searchKnowledge),
		def("upsert_source", "Create or update one knowledge source by externalId.", access.CapKBWrite, schemaSource, false, s.upsertSource),
		def("schedule_call", "Schedule one outbound call of a voice agent (now or at scheduledAt).", access.CapCallsWrite, schemaSchedule, false, s.scheduleCall),
		def("outbound_call", "Queue an immediate outbound call.", access.CapCallsWrite, schemaOutbound, false, s.outboundCall),
		def("list_calls", "List calls with filters and pagination.", access.CapAgentRead, schemaListCalls, true, s.listCalls),
		def("get_call", "Read a call with its attempts, transcript, outcome and analysis.", access.CapAgentRead, schemaID, true, s.getCall),
		def("list_conversations", "List conversations (filter by agent and status).", access.CapConversationRead, schemaListConv, true, s.listConversations),
		def("list_batches", "List call batches (campaigns), newest first.", access.CapAgentRead, schemaListBatch, true, s.listBatches),
		def("pause_batch", "Pause a batch: no new dials, calls in progress finish.", access.CapCallsWrite, schemaID, false, s.batchAction("pause")),
		def("resume_batch", "Resume a paused batch.", access.CapCallsWrite, schemaID, false, s.batchAction("resume")),
		def("cancel_batch", "Cancel a batch: every call not yet final is cancelled.", access.CapCallsWrite, schemaID, false, s.batchAction("cancel")),
	}
}

// Each tool below: decode like the twin, one call into the feature.

func unavailable(what string) error {
	return errs.New(errs.Unavailable, what+" is not running in this process")
}

func (s *Server) listAgents(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	v, err := query(args)
	if err != nil {
		return nil, err
	}
	q, err := agents.ParseQuery(v)
	if err != nil {
		return nil, err
	}
	as, more, err := s.d.Agents.List(ctx, p.OrgID, q)
	if err != nil {
		return nil, err
	}
	return page[[]agents.View]{Items: agents.NewViews(as), More: more}, nil
}

func (s *Server) getAgent(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	id, err := idArg(args)
	if err != nil {
		return nil, err
	}
	a, err := s.d.Agents.Get(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	return agents.NewView(a), nil
}

func (s *Server) createAgent(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	var in agents.Input
	if err := decodeArgs(args, &in); err != nil {
		return nil, err
	}
	a, err := s.d.Agents.Create(ctx, p.OrgID, in)
	if err != nil {
		return nil, err
	}
	return agents.NewView(a), nil
}

func (s *Server) updateAgent(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	id, fields, err := withoutID(args)
	if err != nil {
		return nil, err
	}
	// An unknown agent is "not found" even with bad fields, as on PATCH.
	if _, err := s.d.Agents.Get(ctx, p.OrgID, id); err != nil {
		return nil, err
	}
	var in agents.Input
	if err := decodeArgs(fields, &in); err != nil {
		return nil, err
	}
	a, err := s.d.Agents.Update(ctx, p.OrgID, id, in)
	if err != nil {
		return nil, err
	}
	return agents.NewView(a), nil
}

func (s *Server) searchKnowledge(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.KB == nil {
		return nil, unavailable("the knowledge base")
	}
	var in kb.SearchInput
	if err := decodeArgs(args, &in); err != nil {
		return nil, err
	}
	res, err := s.d.KB.Search(ctx, p.OrgID, in)
	if err != nil {
		return nil, err
	}
	return struct {
		Results []kb.Result `json:"results"`
	}{res}, nil
}

func (s *Server) upsertSource(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.KB == nil {
		return nil, unavailable("the knowledge base")
	}
	var in kb.SourceInput
	if err := decodeArgs(args, &in); err != nil {
		return nil, err
	}
	return s.d.KB.UpsertSource(ctx, p.OrgID, in)
}

// caller is the principal as the calls feature needs it.
func caller(p Principal) calls.Caller {
	return calls.Caller{OrgID: p.OrgID, Internal: p.Internal, CanOverride: p.Can(access.CapSettingsManage)}
}

func (s *Server) scheduleCall(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.Calls == nil {
		return nil, unavailable("calling")
	}
	var req calls.ScheduleRequest
	if err := decodeArgs(args, &req); err != nil {
		return nil, err
	}
	c, msg, err := s.d.Calls.Schedule(ctx, caller(p), req)
	if err != nil {
		return nil, err
	}
	return struct {
		Call    calls.Scheduled `json:"call"`
		Message string          `json:"message"`
	}{c, msg}, nil
}

func (s *Server) outboundCall(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.Calls == nil {
		return nil, unavailable("calling")
	}
	var req calls.OutboundRequest
	if err := decodeArgs(args, &req); err != nil {
		return nil, err
	}
	return s.d.Calls.Outbound(ctx, caller(p), req)
}

func (s *Server) listCalls(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.Calls == nil {
		return nil, unavailable("calling")
	}
	v, err := query(args)
	if err != nil {
		return nil, err
	}
	return s.d.Calls.ListQuery(ctx, p.OrgID, v)
}

func (s *Server) getCall(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.Calls == nil {
		return nil, unavailable("calling")
	}
	id, err := idArg(args)
	if err != nil {
		return nil, err
	}
	return s.call(ctx, p.OrgID, id)
}

// call is a call with its analysis, if it has one.
func (s *Server) call(ctx context.Context, orgID, id string) (callView, error) {
	rec, err := s.d.Calls.Get(ctx, orgID, id)
	if err != nil {
		return callView{}, err
	}
	out := callView{Record: rec}
	if s.d.Analysis != nil {
		v, err := s.d.Analysis.Find(ctx, orgID, analysisstore.KindCall, rec.ID)
		if err != nil {
			return callView{}, err
		}
		if v != nil {
			out.Analysis = v
		}
	}
	return out, nil
}

func (s *Server) listConversations(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.Conversations == nil {
		return nil, unavailable("the conversation engine")
	}
	v, err := query(args)
	if err != nil {
		return nil, err
	}
	q, err := conversations.ParseList(v)
	if err != nil {
		return nil, err
	}
	vs, total, err := s.d.Conversations.List(ctx, p.OrgID, q)
	if err != nil {
		return nil, err
	}
	return page[[]conversations.View]{Items: vs, Total: total, More: q.Offset+len(vs) < total}, nil
}

func (s *Server) listBatches(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
	if s.d.Calls == nil {
		return nil, unavailable("calling")
	}
	v, err := query(args)
	if err != nil {
		return nil, err
	}
	return s.d.Calls.ListBatchesQuery(ctx, p.OrgID, v)
}

// batchAction is pause_batch, resume_batch or cancel_batch.
func (s *Server) batchAction(verb string) func(context.Context, Principal, json.RawMessage) (any, error) {
	return func(ctx context.Context, p Principal, args json.RawMessage) (any, error) {
		if s.d.Calls == nil {
			return nil, unavailable("calling")
		}
		id, err := idArg(args)
		if err != nil {
			return nil, err
		}
		do := map[string]func(context.Context, string, string) (calls.BatchView, string, error){
			"pause": s.d.Calls.PauseBatch, "resume": s.d.Calls.ResumeBatch, "cancel": s.d.Calls.CancelBatch}[verb]
		b, msg, err := do(ctx, p.OrgID, id)
		if err != nil {
			return nil, err
		}
		return actioned{Batch: b, Message: msg}, nil
	}
}
