package api

import (
	"net/http"

	kbapi "github.com/agentd/agentd/app/api/kb"

	callsapi "github.com/agentd/agentd/app/api/calls"
	campaignsapi "github.com/agentd/agentd/app/api/campaigns"
	mcpapi "github.com/agentd/agentd/app/api/mcp"
)

// routes is the one route table: every endpoint with its method, path, error
// family, authentication, capability and body limit. The router, the
// middleware and the OpenAPI document are all built from it.
func (s *Server) routes() {
	// Core: health, the OpenAPI document, API keys.
	s.handle(route{method: "GET", path: "/healthz", auth: authNone, summary: "Liveness and database check"}, s.health)
	s.handle(route{method: "GET", path: "/api/openapi.json", auth: authNone, summary: "This OpenAPI document"}, s.openAPI)
	s.handle(route{method: "POST", path: "/api/v2/api-keys", capability: capAPIKeyManage, summary: "Create an API key (shown once)"}, s.keysAPI.CreateKey)
	s.handle(route{method: "GET", path: "/api/v2/api-keys", capability: capAPIKeyManage, summary: "List the organization's API keys"}, s.keysAPI.ListKeys)
	s.handle(route{method: "DELETE", path: "/api/v2/api-keys/:id", capability: capAPIKeyManage, summary: "Revoke an API key"}, s.keysAPI.RevokeKey)

	// Dashboard sign-in, sessions and members.
	s.handle(route{method: "POST", path: "/api/v2/auth/login", auth: authNone, bodyLimit: 8 << 10, summary: "Sign in with email and password; sets the session cookie"}, s.sessionsAPI.Login)
	s.handle(route{method: "POST", path: "/api/v2/auth/setup", auth: authNone, bodyLimit: 8 << 10, summary: "Set the first password with a one-time setup token and sign in"}, s.sessionsAPI.Setup)
	s.handle(route{method: "POST", path: "/api/v2/auth/logout", bodyLimit: 8 << 10, summary: "Sign out this session, or every session of the user"}, s.sessionsAPI.Logout)
	s.handle(route{method: "GET", path: "/api/v2/auth/me", summary: "The signed-in user and organization"}, s.sessionsAPI.Me)
	s.handle(route{method: "GET", path: "/api/v2/members", capability: capAgentRead, summary: "List the organization's members"}, s.sessionsAPI.ListMembers)
	s.handle(route{method: "POST", path: "/api/v2/members", capability: capMemberManage, summary: "Add a member with a role"}, s.sessionsAPI.AddMember)
	s.handle(route{method: "PATCH", path: "/api/v2/members/:id", capability: capMemberManage, summary: "Change a member's role"}, s.sessionsAPI.UpdateMember)
	s.handle(route{method: "DELETE", path: "/api/v2/members/:id", capability: capMemberManage, summary: "Remove a member with their keys and sessions"}, s.sessionsAPI.RemoveMember)

	// Agents, the workforce view and jobs.
	s.handle(route{method: "GET", path: "/api/v1/agents", family: FamilyAgents, summary: "List agents (filter by type and status, offset paging)"}, s.agentsAPI.ListAgents)
	s.handle(route{method: "POST", path: "/api/v1/agents", family: FamilyAgents, summary: "Create an agent"}, s.agentsAPI.CreateAgent)
	s.handle(route{method: "GET", path: "/api/v1/agents/:id", family: FamilyAgents, summary: "Read an agent with instructions, config and tools"}, s.agentsAPI.GetAgent)
	s.handle(route{method: "PATCH", path: "/api/v1/agents/:id", family: FamilyAgents, summary: "Update some fields of an agent"}, s.agentsAPI.UpdateAgent)
	s.handle(route{method: "DELETE", path: "/api/v1/agents/:id", family: FamilyAgents, summary: "Delete an agent (it becomes inactive and stays listed)"}, s.agentsAPI.DeleteAgent)
	s.handle(route{method: "GET", path: "/api/v2/agents", capability: capAgentRead, summary: "List every worker of the organization (workforce view)"}, s.agentsAPI.ListWorkers)
	s.handle(route{method: "POST", path: "/api/v2/jobs", capability: capAgentWrite, summary: "Assign a new job to an agent"}, s.agentsAPI.CreateJob)
	s.handle(route{method: "GET", path: "/api/v2/jobs", capability: capAgentWrite, summary: "List jobs (optionally of one agent)"}, s.agentsAPI.ListJobs)
	s.handle(route{method: "PATCH", path: "/api/v2/jobs/:id", capability: capAgentWrite, summary: "Update a job"}, s.agentsAPI.UpdateJob)
	s.handle(route{method: "DELETE", path: "/api/v2/jobs/:id", capability: capAgentWrite, summary: "Delete a job"}, s.agentsAPI.DeleteJob)

	// Knowledge base.
	kb := func(method, path string, limit int64, summary string, h handlerFunc) {
		s.handle(route{method: method, path: path, family: FamilyKB, bodyLimit: limit, summary: summary}, h)
	}
	kb(http.MethodPost, "/api/v1/kb/collections", 0, "Create a knowledge collection", s.kbAPI.CreateCollection)
	kb(http.MethodGet, "/api/v1/kb/collections", 0, "List knowledge collections", s.kbAPI.ListCollections)
	kb(http.MethodGet, "/api/v1/kb/collections/:id", 0, "Read a knowledge collection", s.kbAPI.GetCollection)
	kb(http.MethodPatch, "/api/v1/kb/collections/:id", 0, "Update a knowledge collection (name, description, search weight)", s.kbAPI.UpdateCollection)
	kb(http.MethodDelete, "/api/v1/kb/collections/:id", 0, "Delete a collection with its sources", s.kbAPI.DeleteCollection)
	kb(http.MethodPost, "/api/v1/kb/sources", 2<<20, "Create or update one knowledge source", s.kbAPI.UpsertSource)
	kb(http.MethodGet, "/api/v1/kb/sources", 0, "List knowledge sources", s.kbAPI.ListSources)
	kb(http.MethodDelete, "/api/v1/kb/sources", 0, "Delete knowledge sources by externalId", s.kbAPI.DeleteSources)
	kb(http.MethodPost, "/api/v1/kb/sources/batch", 32<<20, "Create or update up to 50 knowledge sources", s.kbAPI.BatchSources)
	kb(http.MethodPost, "/api/v1/kb/sources/upload", kbapi.UploadBodyLimit, "Upload a file (PDF, DOCX, XLSX, PPTX, HTML, CSV, text, Markdown) as a knowledge source", s.kbAPI.UploadSource)
	kb(http.MethodGet, "/api/v1/kb/web-sources", 0, "List a collection's web pages and crawls with their last fetch", s.kbAPI.ListWebSources)
	kb(http.MethodDelete, "/api/v1/kb/web-sources/:id", 0, "Stop refreshing a web page or crawl (its sources stay)", s.kbAPI.DeleteWebSource)
	kb(http.MethodPost, "/api/v1/kb/search", 0, "Search a knowledge collection (hybrid, semantic or keyword)", s.kbAPI.SearchKB)

	// Listings.
	s.handle(route{method: "POST", path: "/api/v1/listings/sync", family: FamilyListings, bodyLimit: 32 << 20,
		summary: "Upsert 1 to 1000 listings by externalId"}, s.listingsAPI.SyncListings)
	s.handle(route{method: "GET", path: "/api/v1/listings/sync", family: FamilyListings,
		summary: "Every active listing (up to 10,000) for diffing"}, s.listingsAPI.ListListings)
	s.handle(route{method: "GET", path: "/api/v1/listings/search", family: FamilyListings,
		summary: "Search listings by text, category, price and attributes"}, s.listingsAPI.SearchListings)

	// Calls and telephony.
	s.handle(route{method: "POST", path: "/api/v1/calls/schedule", family: FamilyCalls, auth: authInternal,
		summary: "Schedule one outbound call"}, s.callsAPI.ScheduleCall)
	s.handle(route{method: "POST", path: "/api/v1/calls/batch", family: FamilyCalls, bodyLimit: 8 << 20,
		summary: "Schedule 1 to 1,000 calls for one agent"}, s.callsAPI.BatchCalls)
	s.handle(route{method: "POST", path: "/api/v1/calls/outbound", family: FamilyCalls,
		summary: "Queue an immediate outbound call"}, s.callsAPI.OutboundCall)
	s.handle(route{method: "GET", path: "/api/v1/calls", family: FamilyCalls,
		summary: "List calls with filters, sorting and pagination"}, s.callsAPI.ListCalls)
	s.handle(route{method: "GET", path: "/api/v1/calls/:id", family: FamilyCalls,
		summary: "Read one call"}, s.callsAPI.GetCall)
	s.handle(route{method: "DELETE", path: "/api/v1/calls/:id", family: FamilyCalls,
		summary: "Cancel a call that has not ended"}, s.callsAPI.CancelCall)
	s.handle(route{method: "GET", path: "/api/v1/calls/:id/recording", family: FamilyCalls, operation: "callRecording",
		summary: "Download a voice call's recording (WAV, caller left, agent right)"}, s.callsAPI.Recording)
	s.handle(route{method: "POST", path: "/api/v1/telephony/livekit/webhook", family: FamilyV2, auth: authNone,
		summary: "Receive a signed LiveKit webhook (ends answered calls)"}, s.callsAPI.LiveKitWebhook)
	s.handle(route{method: "POST", path: "/api/v1/calls/:id/result", family: FamilyCalls, bodyLimit: callsapi.ResultBodyLimit,
		summary: "Record the voice agent's summary, transcript, outcome and metadata of a call"}, s.callsAPI.CallResult)

	// Campaigns and compliance: batches, the do-not-call list, calling hours.
	s.handle(route{method: "GET", path: "/api/v1/calls/batches", family: FamilyCalls,
		summary: "List call batches (campaigns), newest first"}, s.campaignsAPI.ListBatches)
	s.handle(route{method: "GET", path: "/api/v1/calls/batches/:id", family: FamilyCalls,
		summary: "Read a batch with the counts of its calls"}, s.campaignsAPI.GetBatch)
	s.handle(route{method: "POST", path: "/api/v1/calls/batches/:id/pause", family: FamilyCalls,
		operation: "pauseBatch", summary: "Pause a batch: no new dials, calls in progress finish"}, s.campaignsAPI.BatchAction(campaignsapi.PauseBatch))
	s.handle(route{method: "POST", path: "/api/v1/calls/batches/:id/resume", family: FamilyCalls,
		operation: "resumeBatch", summary: "Resume a paused batch"}, s.campaignsAPI.BatchAction(campaignsapi.ResumeBatch))
	s.handle(route{method: "DELETE", path: "/api/v1/calls/batches/:id", family: FamilyCalls,
		operation: "cancelBatch", summary: "Cancel a batch: every call not yet final is cancelled"}, s.campaignsAPI.BatchAction(campaignsapi.CancelBatch))
	s.handle(route{method: "POST", path: "/api/v1/dnc", family: FamilyCalls,
		summary: "Add up to 10,000 numbers to the do-not-call list"}, s.campaignsAPI.AddDNC)
	s.handle(route{method: "DELETE", path: "/api/v1/dnc", family: FamilyCalls,
		summary: "Remove numbers from the do-not-call list"}, s.campaignsAPI.RemoveDNC)
	s.handle(route{method: "GET", path: "/api/v1/dnc", family: FamilyCalls,
		summary: "List or look up numbers on the do-not-call list"}, s.campaignsAPI.ListDNC)
	s.handle(route{method: "GET", path: "/api/v2/organization/settings", capability: capAgentRead,
		summary: "The organization's settings (calling hours)"}, s.campaignsAPI.GetSettings)
	s.handle(route{method: "PATCH", path: "/api/v2/organization/settings", capability: capSettingsManage,
		summary: "Change the organization's settings (calling hours)"}, s.campaignsAPI.PatchSettings)

	// Events and webhooks (app/events).
	wh := func(method, path, summary string, h handlerFunc) {
		s.handle(route{method: method, path: path, capability: capWebhookManage, summary: summary}, h)
	}
	wh(http.MethodPost, "/api/v2/webhooks", "Create a webhook endpoint (its signing secret is shown once)", s.webhooksAPI.CreateWebhook)
	wh(http.MethodGet, "/api/v2/webhooks", "List webhook endpoints", s.webhooksAPI.ListWebhooks)
	wh(http.MethodGet, "/api/v2/webhooks/:id", "Read a webhook endpoint", s.webhooksAPI.GetWebhook)
	wh(http.MethodPatch, "/api/v2/webhooks/:id", "Change a webhook endpoint's URL, events, description or enabled", s.webhooksAPI.UpdateWebhook)
	wh(http.MethodDelete, "/api/v2/webhooks/:id", "Delete a webhook endpoint with its deliveries", s.webhooksAPI.DeleteWebhook)
	wh(http.MethodPost, "/api/v2/webhooks/:id/rotate-secret", "New signing secret; the old one also signs for 24 h", s.webhooksAPI.RotateWebhookSecret)
	wh(http.MethodPost, "/api/v2/webhooks/:id/test", "Send a ping event to the endpoint", s.webhooksAPI.TestWebhook)
	wh(http.MethodGet, "/api/v2/webhooks/:id/deliveries", "List the endpoint's deliveries with every attempt", s.webhooksAPI.ListDeliveries)
	wh(http.MethodPost, "/api/v2/webhooks/:id/deliveries/:deliveryId/retry", "Send a delivery again now (replay)", s.webhooksAPI.RetryDelivery)
	ev := func(path, summary string, h handlerFunc) {
		s.handle(route{method: http.MethodGet, path: path, capability: capEventsRead, summary: summary}, h)
	}
	ev("/api/v2/events", "Pull the event log after a cursor", s.webhooksAPI.ListEvents)
	ev("/api/v2/events/stream", "Stream new events as server-sent events (resume with Last-Event-ID)", s.webhooksAPI.StreamEvents)
	ev("/api/v2/events/types", "The event catalogue", s.webhooksAPI.ListEventTypes)

	// Conversations (app/api/conversations over app/conversations): the conversation
	// API and the OpenAI-compatible endpoint voice workers point at.
	cv := func(method, path, capability, op string, limit int64, fam Family, summary string, h handlerFunc) {
		s.handle(route{method: method, path: path, capability: capability, operation: op, bodyLimit: limit, family: fam, summary: summary}, h)
	}
	cv("POST", "/api/v1/conversations", capConversationWrite, "createConversation", 0, FamilyV2, "Start a conversation with an agent", s.conv.Create)
	cv("GET", "/api/v1/conversations", capConversationRead, "listConversations", 0, FamilyV2, "List conversations (filter by agent and status, offset paging)", s.conv.List)
	cv("GET", "/api/v1/conversations/:id", capConversationRead, "getConversation", 0, FamilyV2, "Read a conversation with its messages", s.conv.Get)
	cv("POST", "/api/v1/conversations/:id/messages", capConversationWrite, "sendMessage", 256<<10, FamilyV2, "Send a message and get the agent's answer (whole, or streamed as server-sent events)", s.conv.Send)
	cv("POST", "/api/v1/conversations/:id/end", capConversationWrite, "endConversation", 0, FamilyV2, "End a conversation (conversation.ended carries the transcript)", s.conv.End)
	cv("POST", "/api/v1/openai/chat/completions", capConversationWrite, "chatCompletions", 4<<20, FamilyOpenAI, "OpenAI-compatible chat completion: model is an agent id; agentd adds instructions, passages and the agent's tools", s.conv.ChatCompletions)
	cv("POST", "/api/v1/openai/responses", capConversationWrite, "createResponse", 4<<20, FamilyOpenAI, "OpenAI-compatible Responses API: model is an agent id; previous_response_id continues a stored response", s.conv.Responses)
	cv("GET", "/api/v1/openai/models", capConversationRead, "openAIModels", 0, FamilyOpenAI, "OpenAI-compatible model list: the organization's agents that can answer", s.conv.Models)
	cv("GET", "/api/v1/openai/models/:id", capConversationRead, "openAIModel", 0, FamilyOpenAI, "OpenAI-compatible model: one agent that can answer", s.conv.Model)
	cv("POST", "/api/v2/tools/secret", capWebhookManage, "rotateToolsSecret", 0, FamilyV2, "Create or rotate the organization's tools secret, which signs url tool calls (shown once; the previous one signs beside it for 24 h)", s.conv.RotateToolsSecret)

	s.handle(route{method: "POST", path: "/mcp", family: FamilyV2, operation: "mcp", bodyLimit: mcpapi.BodyLimit,
		summary: "agentd's MCP server (Model Context Protocol, streamable HTTP): tools for agents, knowledge, calls, campaigns and conversations"}, s.mcp.Serve)

	// The chat widget (app/api/widget over app/widget): public, no API key;
	// the page's Origin (allowedDomains) and the visitor token decide.
	s.mux.add("GET", "/widget.js", widgetScript)
	s.mux.add("GET", "/widget-audio.js", widgetAudio)
	wg := func(method, path, op string, limit int64, summary string, h handlerFunc) {
		s.handle(route{method: method, path: path, auth: authNone, operation: op, bodyLimit: limit, family: FamilyV2, summary: summary}, h)
	}
	wg("GET", "/api/public/chat/:agentId/config", "widgetConfig", 0, "The chat widget's look for a listed site (theme, color, position, greeting, placeholder)", s.widget.Config)
	wg("POST", "/api/public/chat/:agentId/sessions", "widgetSession", 8<<10, "Start a widget conversation from a listed site: a short-lived visitor token", s.widget.Start)
	wg("GET", "/api/public/chat/sessions/:id/messages", "widgetHistory", 0, "The visitor's conversation so far, with a renewed token", s.widget.History)
	wg("POST", "/api/public/chat/sessions/:id/messages", "widgetMessage", 64<<10, "Send a visitor message; the answer streams as server-sent events", s.widget.Send)
	// Browser voice sessions (app/api/talk over app/webcall): a WebSocket
	// each, on the same voice loop as phone calls.
	s.handle(route{method: "GET", path: "/api/v2/agents/:id/talk", capability: capCallsWrite, operation: "talkToAgent", family: FamilyV2,
		summary: "Talk to an agent from a browser: a WebSocket voice session, recorded as a call with direction web"}, s.talk.Dashboard)
	wg("GET", "/api/public/chat/sessions/:id/voice", "widgetVoice", 0, "A visitor's voice session with a chat agent that has voiceEnabled: a WebSocket", s.talk.Widget)
	// Post-call analysis (app/api/analysis over app/analysis, issue 24).
	cv("GET", "/api/v1/agents/:id/analysis-plan", capAgentRead, "getAnalysisPlan", 0, FamilyV2, "Read an agent's analysis plan", s.analysis.GetPlan)
	cv("PUT", "/api/v1/agents/:id/analysis-plan", capAgentWrite, "putAnalysisPlan", 64<<10, FamilyV2, "Set an agent's analysis plan (summary, structured data with a JSON Schema, success evaluation)", s.analysis.PutPlan)
	cv("GET", "/api/v1/calls/:id/analysis", capAgentRead, "getCallAnalysis", 0, FamilyV2, "Read a call's analysis", s.analysis.CallAnalysis)
	cv("POST", "/api/v1/calls/:id/analyze", capCallsWrite, "analyzeCall", 0, FamilyV2, "Analyse a call again", s.analysis.AnalyzeCall)
	cv("POST", "/api/v1/analyses", capCallsWrite, "reanalyzeCalls", 0, FamilyV2, "Analyse calls again in bulk (ids, a batch or an agent's calls)", s.analysis.Bulk)
	cv("GET", "/api/v1/analyses", capAgentRead, "analysisProgress", 0, FamilyV2, "A batch's analysis progress, success rate and answers per field", s.analysis.Progress)
	cv("POST", "/api/v1/agents/:id/tests", capConversationWrite, "runAgentTests", 1<<20, FamilyV2, "Run a test file (YAML or JSON scenarios) against an agent through the conversation engine", s.analysis.RunTests)
	cv("GET", "/api/v1/conversations/:id/analysis", capConversationRead, "getConversationAnalysis", 0, FamilyV2, "Read a conversation's analysis", s.analysis.ConversationAnalysis)

	// The dashboard (app/web): HTML pages that check the session cookie
	// themselves; not API routes, so not in the OpenAPI document.
	for _, rt := range s.site.Routes() {
		s.page(rt)
	}
}
