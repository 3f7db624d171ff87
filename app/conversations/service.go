// Package conversations is the conversation engine: one turn of an agent
// (its instructions, passages retrieved from its own collections and
// listings, its trimmed history, its tools) answered by the configured
// model or, with no model, by the builtin engine that quotes the best
// passage. It serves the conversation API, the OpenAI-compatible endpoint
// of voice workers and the chat widget (app/widget); no HTTP here.
package conversations

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/agentd/agentd/app/conversations/mcptools"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Channels a conversation comes through.
const (
	ChannelAPI    = "api"
	ChannelWidget = "widget"
	ChannelVoice  = "voice"
)

// AgentReader reads an organization's agent (the agents store is one).
type AgentReader interface {
	GetAgent(ctx context.Context, orgID, id string) (agentstore.Agent, error)
}

// Knowledge searches a collection of the organization (*kb.Service); it
// refuses a collection that is not the organization's.
type Knowledge interface {
	Search(ctx context.Context, orgID string, in kb.SearchInput) ([]kb.Result, error)
}

// Listings searches the organization's listings (*listings.Service).
type Listings interface {
	Search(ctx context.Context, q listings.Query) ([]listings.Hit, error)
}

// Poster posts a url tool's call through the forgery guard
// (*safehttp.Client).
type Poster interface {
	Post(ctx context.Context, rawURL string, header map[string]string, body []byte) (int, []byte, error)
}

// Deps are what the engine uses.
type Deps struct {
	Agents    AgentReader
	Store     *convstore.Store
	Knowledge Knowledge
	Listings  Listings // nil: listings are never searched
	Tools     Poster
	Log       *slog.Logger
	// MCP calls the agents' mcp tools (nil: they are not offered);
	// Secrets opens their header values.
	MCP     *mcptools.Client
	Secrets sqldb.Sealer
	// Transfer runs transfer_call on the calls of a dialer that can
	// transfer them (LiveKit); nil: the tool is not offered there.
	Transfer dial.Transferrer
}

// Config tunes the engine.
type Config struct {
	Model         llm.Model // nil: builtin (quotes passages, never generates)
	ContextTokens int       // the model's context budget; 0: 8192
	ToolTimeout   time.Duration
	MaxRounds     int // tool rounds a turn; 0: 5
	// TurnTimeout bounds a whole turn (model rounds and tools); 0:
	// DefaultTurnTimeout.
	TurnTimeout time.Duration
}

// Service is the engine. Safe for concurrent use.
type Service struct {
	d      Deps
	cfg    Config
	tokens *embed.Chunker // counts cl100k tokens for trimming
}

// New builds the engine.
func New(d Deps, cfg Config) (*Service, error) {
	if cfg.ContextTokens <= 0 {
		cfg.ContextTokens = 8192
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = 10 * time.Second
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = DefaultTurnTimeout
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = 5
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	c, err := embed.NewChunker(embed.DefaultChunkTokens, 0)
	if err != nil {
		return nil, err
	}
	return &Service{d: d, cfg: cfg, tokens: c}, nil
}

// ModelName names the answering engine (doctor, logs).
func (s *Service) ModelName() string {
	if s.cfg.Model == nil {
		return "builtin"
	}
	return s.cfg.Model.Name()
}

// Citation is a passage an answer drew on.
type Citation struct {
	SourceID   string `json:"sourceId"`
	ExternalID string `json:"externalId"`
	Title      string `json:"title"`
	Text       string `json:"text"`
}

// ToolCall is a tool the model called during a turn, with what it got.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Result    string `json:"result"`
}

// Message is a message as the API shows it.
type Message struct {
	ID        string     `json:"id"`
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Citations []Citation `json:"citations"`
	ToolCalls []ToolCall `json:"toolCalls"`
	Usage     *llm.Usage `json:"usage"`
	CreatedAt string     `json:"createdAt"`
}

// View is a conversation as the API shows it; Messages only when read one
// by one.
type View struct {
	ID           string          `json:"id"`
	AgentID      string          `json:"agentId"`
	Channel      string          `json:"channel"`
	Status       string          `json:"status"`
	CallID       *string         `json:"callId"`
	Metadata     json.RawMessage `json:"metadata"`
	MessageCount int             `json:"messageCount"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
	EndedAt      *string         `json:"endedAt"`
	Messages     []Message       `json:"messages,omitzero"` // [] when read one by one and empty
}

// NewView is the API view of a stored conversation.
func NewView(c convstore.Conversation, msgs []convstore.Message) View {
	v := View{ID: c.ID, AgentID: c.AgentID, Channel: c.Channel, Status: c.Status, Metadata: c.Metadata,
		MessageCount: c.MessageCount, CreatedAt: apitime.Format(c.CreatedAt), UpdatedAt: apitime.Format(c.UpdatedAt)}
	if c.CallID != "" {
		v.CallID = &c.CallID
	}
	if c.EndedAt != nil {
		s := apitime.Format(*c.EndedAt)
		v.EndedAt = &s
	}
	if msgs != nil {
		v.Messages = make([]Message, 0, len(msgs))
		for _, m := range msgs {
			v.Messages = append(v.Messages, messageView(m))
		}
	}
	return v
}

func messageView(m convstore.Message) Message {
	out := Message{ID: m.ID, Role: m.Role, Content: m.Content, Citations: []Citation{}, ToolCalls: []ToolCall{},
		CreatedAt: apitime.Format(m.CreatedAt)}
	json.Unmarshal(m.Citations, &out.Citations)
	json.Unmarshal(m.ToolCalls, &out.ToolCalls)
	if len(m.Usage) > 0 {
		out.Usage = &llm.Usage{}
		json.Unmarshal(m.Usage, out.Usage)
	}
	if out.Citations == nil {
		out.Citations = []Citation{}
	}
	if out.ToolCalls == nil {
		out.ToolCalls = []ToolCall{}
	}
	return out
}

// EventView is the public data of a conversation event rendered from the
// snapshot its transaction recorded: the conversation, with its transcript
// when it ended.
func EventView(s convstore.Snapshot) any { return render(s.Conversation, s.Messages) }

// render is the conversation as its events show it.
func render(c convstore.Conversation, msgs []convstore.Message) any {
	if msgs == nil && c.Status == "ended" {
		msgs = []convstore.Message{}
	}
	return NewView(c, msgs)
}

// StartInput starts a conversation.
type StartInput struct {
	AgentID  string          `json:"agentId"`
	Metadata json.RawMessage `json:"metadata"`
}

// maxMetadata bounds a conversation's metadata (16 KB).
const maxMetadata = 16 << 10

// Start opens a conversation with an active agent of the organization.
func (s *Service) Start(ctx context.Context, orgID, channel string, in StartInput) (View, error) {
	if in.AgentID == "" {
		return View{}, errs.InvalidField("agentId", "required")
	}
	meta := json.RawMessage("{}")
	if len(in.Metadata) > 0 && string(in.Metadata) != "null" {
		var m map[string]any
		if err := json.Unmarshal(in.Metadata, &m); err != nil || m == nil {
			return View{}, errs.InvalidField("metadata", "must be an object")
		}
		if len(in.Metadata) > maxMetadata {
			return View{}, errs.InvalidField("metadata", "at most 16 KB")
		}
		meta, _ = json.Marshal(m)
	}
	a, err := s.agent(ctx, orgID, in.AgentID)
	if err != nil {
		return View{}, err
	}
	c, _, err := s.d.Store.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: a.ID, Channel: channel, Metadata: meta})
	if err != nil {
		return View{}, err
	}
	return NewView(c, nil), nil
}

// agent reads an active agent of the organization: another
// organization's is not found, an inactive one a conflict.
// Agent is the organization's agent that can answer: not found, or a
// conflict when inactive.
func (s *Service) Agent(ctx context.Context, orgID, id string) (agentstore.Agent, error) {
	return s.agent(ctx, orgID, id)
}

func (s *Service) agent(ctx context.Context, orgID, id string) (agentstore.Agent, error) {
	a, err := s.d.Agents.GetAgent(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return a, errs.Wrap(errs.NotFound, "agent not found", err)
	}
	if err != nil {
		return a, err
	}
	if a.Status == "inactive" {
		return a, errs.New(errs.Conflict, "agent is inactive")
	}
	return a, nil
}

func convErr(err error) error {
	switch {
	case errors.Is(err, convstore.ErrEnded):
		return errs.Wrap(errs.Conflict, "conversation has ended", err)
	case errors.Is(err, sqldb.ErrNotFound):
		return errs.Wrap(errs.NotFound, "conversation not found", err)
	}
	return err
}

// Get reads a conversation with its messages.
func (s *Service) Get(ctx context.Context, orgID, id string) (View, error) {
	c, err := s.d.Store.Get(ctx, orgID, id)
	if err != nil {
		return View{}, convErr(err)
	}
	msgs, err := s.d.Store.Messages(ctx, id)
	if err != nil {
		return View{}, err
	}
	if msgs == nil {
		msgs = []convstore.Message{} // clients expect "messages": []
	}
	return NewView(c, msgs), nil
}

// ListQuery is a page of conversations.
type ListQuery = convstore.Filter

// ParseList reads agentId, status, limit (1-100, default 20) and offset.
func ParseList(v url.Values) (ListQuery, error) {
	q := ListQuery{AgentID: v.Get("agentId"), Status: v.Get("status"), Limit: 20}
	if q.Status != "" && q.Status != "active" && q.Status != "ended" {
		return q, errs.InvalidField("status", "must be active or ended")
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return q, errs.InvalidField("limit", "must be an integer from 1 to 100")
		}
		q.Limit = n
	}
	if s := v.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, errs.InvalidField("offset", "must be an integer >= 0")
		}
		q.Offset = n
	}
	return q, nil
}

// List is a page of the organization's conversations and the total.
func (s *Service) List(ctx context.Context, orgID string, q ListQuery) ([]View, int, error) {
	cs, total, err := s.d.Store.List(ctx, orgID, q)
	if err != nil {
		return nil, 0, err
	}
	out := make([]View, 0, len(cs))
	for _, c := range cs {
		out = append(out, NewView(c, nil))
	}
	return out, total, nil
}

// End ends a conversation (conversation.ended carries the transcript).
func (s *Service) End(ctx context.Context, orgID, id string) (View, error) {
	c, err := s.d.Store.End(ctx, orgID, id)
	if err != nil {
		return View{}, convErr(err)
	}
	return NewView(c, nil), nil
}

// ToolsSecretOverlap is how long a rotated-out tools secret still signs
// url tool calls (beside the new one), as for webhooks.
const ToolsSecretOverlap = 24 * time.Hour

// ToolsSecretView is the answer of POST /api/v2/tools/secret: the new
// secret, shown only here, and until when the previous one still signs
// (null when there was none).
type ToolsSecretView struct {
	Secret                  string  `json:"secret"`
	PreviousSecretExpiresAt *string `json:"previousSecretExpiresAt"`
}

// RotateToolsSecret creates the organization's tools secret, or replaces
// it (the previous one signs beside it for ToolsSecretOverlap); the new
// secret is shown once, here.
func (s *Service) RotateToolsSecret(ctx context.Context, orgID string) (ToolsSecretView, error) {
	secret := newSecret()
	until, err := s.d.Store.RotateToolsSecret(ctx, orgID, secret, time.Now(), ToolsSecretOverlap)
	if err != nil {
		return ToolsSecretView{}, err
	}
	v := ToolsSecretView{Secret: secret}
	if until != nil {
		at := apitime.Format(*until)
		v.PreviousSecretExpiresAt = &at
	}
	return v, nil
}
