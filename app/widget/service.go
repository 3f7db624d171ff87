// Package widget is the chat widget's rules: which page may talk to which
// agent (allowedDomains), visitor tokens signed with the server's key and
// scoped to one conversation, and the abuse limits (per visitor, per
// address, per agent per day and each address's share of it, message
// length, one answer at a time). The conversation itself is the engine's
// (app/conversations); no HTTP here.
package widget

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/widgetstore"
)

// AgentReader reads an agent by id alone: a visitor knows no organization
// (the widget store is one).
type AgentReader interface {
	GetAgentAnyOrg(ctx context.Context, id string) (agentstore.Agent, error)
}

// Conversations is the engine (*conversations.Service).
type Conversations interface {
	Start(ctx context.Context, orgID, channel string, in conversations.StartInput) (conversations.View, error)
	Send(ctx context.Context, orgID, convID, content string, onDelta func(string)) (conversations.Message, error)
	Get(ctx context.Context, orgID, id string) (conversations.View, error)
}

// Store keeps the signing key and the daily counts (*widgetstore.Store).
type Store interface {
	Secret(ctx context.Context, fresh func() string) (string, error)
	RotateSecret(ctx context.Context, secret string) error
	CountMessage(ctx context.Context, agentID, address, day string, limit, perAddress int) (widgetstore.Refusal, error)
	PruneAddresses(ctx context.Context, day string) error
	ConversationAgent(ctx context.Context, id string) (orgID, agentID string, err error)
}

// Deps are what the widget uses.
type Deps struct {
	Agents AgentReader
	Conv   Conversations
	Store  Store
	// Limits, when set, counts the per-visitor, per-address and session
	// limits across processes (PostgreSQL); nil counts them in this
	// process (SQLite).
	Limits Limits
}

// Bounds on what a visitor can make the server do (README "Security").
const (
	DefaultTokenTTL          = 2 * time.Hour // a visitor token's life; reading the history renews it
	DefaultVisitorPerMinute  = 10            // messages of one visitor (conversation)
	DefaultAddressPerMinute  = 30            // messages of one address
	DefaultSessionsPerMinute = 10            // new conversations of one address
	DefaultDailyCap          = 1000          // messages per agent per UTC day without config.maxMessagesPerDay
	DefaultMaxMessage        = 4000          // characters of one visitor message
	// MaxVisitorLifetime ends a visitor session: its tokens are renewed
	// up to this long after the first was issued, then the widget starts
	// a new conversation.
	MaxVisitorLifetime = 24 * time.Hour
	// AddressSharePercent of an agent's daily cap is what one address may
	// use in a UTC day, at least AddressShareMin (a visitor can hold a
	// conversation on a small cap), so one client cannot use up the day
	// for every visitor.
	AddressSharePercent = 10
	AddressShareMin     = 20
	// maxToken bounds a visitor token's length before it is decoded.
	maxToken = 1024
)

// AddressShare is how many of an agent's limit messages a day one
// address may send.
func AddressShare(limit int) int {
	return min(limit, max(AddressShareMin, limit*AddressSharePercent/100))
}

// Config tunes the limits; zero values take the Default constants.
type Config struct {
	TokenTTL          time.Duration
	VisitorPerMinute  int
	AddressPerMinute  int
	SessionsPerMinute int
	DailyCap          int
	MaxMessage        int
	Now               func() time.Time
}

// Service is the widget. Safe for concurrent use.
type Service struct {
	d                          Deps
	cfg                        Config
	visitor, address, sessions *window
	streams                    streams

	mu     sync.Mutex
	secret []byte
	read   time.Time // when secret was read: other processes may rotate it
	pruned string    // the day old per-address counts were last pruned
}

// New builds the widget.
func New(d Deps, cfg Config) *Service {
	def := func(v *int, n int) {
		if *v <= 0 {
			*v = n
		}
	}
	def(&cfg.VisitorPerMinute, DefaultVisitorPerMinute)
	def(&cfg.AddressPerMinute, DefaultAddressPerMinute)
	def(&cfg.SessionsPerMinute, DefaultSessionsPerMinute)
	def(&cfg.DailyCap, DefaultDailyCap)
	def(&cfg.MaxMessage, DefaultMaxMessage)
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{d: d, cfg: cfg, visitor: newWindow(cfg.VisitorPerMinute, time.Minute),
		address: newWindow(cfg.AddressPerMinute, time.Minute), sessions: newWindow(cfg.SessionsPerMinute, time.Minute),
		streams: streams{open: map[string]bool{}}}
}

// LimitError is a 429: RetryAfter says when to try again.
type LimitError struct {
	RetryAfter time.Duration
	Err        *errs.Error
}

func (e *LimitError) Error() string { return e.Err.Error() }
func (e *LimitError) Unwrap() error { return e.Err }

func limited(msg string, after time.Duration) error {
	if after < time.Second {
		after = time.Second
	}
	return &LimitError{RetryAfter: after, Err: &errs.Error{Kind: errs.RateLimited, Message: msg}}
}

// Settings are the agent's look, as the widget draws it.
type Settings struct {
	Theme          string   `json:"theme"`
	PrimaryColor   string   `json:"primaryColor"`
	Position       string   `json:"position"`
	Greeting       string   `json:"greeting"`
	Placeholder    string   `json:"placeholder"`
	Title          string   `json:"title"`
	VoiceEnabled   bool     `json:"voiceEnabled"`
	AllowedDomains []string `json:"-"`
	MaxPerDay      int      `json:"-"`
}

func settings(a agentstore.Agent) Settings {
	var c struct {
		Theme, PrimaryColor, Position, Greeting, Placeholder, Title string
		AllowedDomains                                              []string
		MaxMessagesPerDay                                           int
		VoiceEnabled                                                bool
	}
	json.Unmarshal(a.Config, &c)
	s := Settings{Theme: c.Theme, PrimaryColor: c.PrimaryColor, Position: c.Position, Greeting: c.Greeting,
		Placeholder: c.Placeholder, Title: c.Title, AllowedDomains: c.AllowedDomains, MaxPerDay: c.MaxMessagesPerDay,
		VoiceEnabled: c.VoiceEnabled}
	if s.Title == "" {
		s.Title = a.Name
	}
	if s.Theme == "" {
		s.Theme = "light"
	}
	if s.PrimaryColor == "" {
		s.PrimaryColor = "#2563eb"
	}
	if s.Position == "" {
		s.Position = "bottom-right"
	}
	if s.Placeholder == "" {
		s.Placeholder = "Type your message…"
	}
	return s
}

var errUnavailable = errs.New(errs.Forbidden, "chat is unavailable on this site")

// agent reads an agent a page may talk to: a chat agent that is not
// inactive, with the page's origin in its allowedDomains. Anything else,
// an unknown id included, is the same 403, so a page learns nothing about
// other agents, not even that they exist.
func (s *Service) agent(ctx context.Context, id, origin string) (agentstore.Agent, Settings, error) {
	a, err := s.d.Agents.GetAgentAnyOrg(ctx, id)
	if errs.Is(err, errs.NotFound) || errors.Is(err, sqldb.ErrNotFound) {
		return a, Settings{}, errUnavailable
	}
	if err != nil {
		return a, Settings{}, err
	}
	st := settings(a)
	if a.Type != "chat" || a.Status == "inactive" || !Allowed(st.AllowedDomains, origin) {
		return a, st, errUnavailable
	}
	return a, st, nil
}

// AllowOrigin reports whether the page at origin (as Origin gives it) may call the agent
// (CORS preflight of the session route).
func (s *Service) AllowOrigin(ctx context.Context, agentID, origin string) bool {
	_, _, err := s.agent(ctx, agentID, origin)
	return err == nil
}

// AllowConversationOrigin is AllowOrigin for a widget conversation's agent.
func (s *Service) AllowConversationOrigin(ctx context.Context, convID, origin string) bool {
	_, agentID, err := s.d.Store.ConversationAgent(ctx, convID)
	return err == nil && s.AllowOrigin(ctx, agentID, origin)
}

// Config is GET /api/public/chat/{agentId}/config: the look of the widget,
// before any conversation exists.
func (s *Service) Config(ctx context.Context, agentID, origin string) (Settings, error) {
	_, st, err := s.agent(ctx, agentID, origin)
	return st, err
}

// Session is a new visitor's conversation.
type Session struct {
	Token          string   `json:"token"`
	ConversationID string   `json:"conversationId"`
	Greeting       string   `json:"greeting"`
	Settings       Settings `json:"settings"`
}

// Start opens a widget conversation for a page at origin.
func (s *Service) Start(ctx context.Context, agentID, origin, addr string) (Session, error) {
	a, st, err := s.agent(ctx, agentID, origin)
	if err != nil {
		return Session{}, err
	}
	if ok, after, err := s.take(ctx, s.sessions, "session", addrKey(addr), s.cfg.Now()); err != nil {
		return Session{}, err
	} else if !ok {
		return Session{}, limited("too many new conversations from this address", after)
	}
	meta, _ := json.Marshal(map[string]string{"origin": origin})
	v, err := s.d.Conv.Start(ctx, a.OrgID, conversations.ChannelWidget, conversations.StartInput{AgentID: a.ID, Metadata: meta})
	if err != nil {
		return Session{}, err
	}
	tok, err := s.token(ctx, Claims{OrgID: a.OrgID, AgentID: a.ID, ConversationID: v.ID, First: s.cfg.Now().Unix()})
	if err != nil {
		return Session{}, err
	}
	return Session{Token: tok, ConversationID: v.ID, Greeting: st.Greeting, Settings: st}, nil
}

// key is the signing key, read again every minute so a rotation by the
// CLI reaches a running server.
func (s *Service) key(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secret != nil && time.Since(s.read) < time.Minute {
		return s.secret, nil
	}
	sec, err := s.d.Store.Secret(ctx, NewSecret)
	if err != nil {
		return nil, err
	}
	s.secret, s.read = []byte(sec), time.Now()
	return s.secret, nil
}

func (s *Service) token(ctx context.Context, c Claims) (string, error) {
	k, err := s.key(ctx)
	if err != nil {
		return "", err
	}
	// A renewal never reaches past the session's maximum lifetime.
	c.Expires = min(s.cfg.Now().Add(s.cfg.TokenTTL).Unix(), c.First+int64(MaxVisitorLifetime/time.Second))
	return sign(k, c), nil
}

// NewSecret is a fresh signing key (256 random bits).
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// RotateSecret replaces the signing key (`agentd widget rotate-secret`):
// every visitor token stops working and widgets start new conversations.
func (s *Service) RotateSecret(ctx context.Context) error {
	if err := s.d.Store.RotateSecret(ctx, NewSecret()); err != nil {
		return err
	}
	s.mu.Lock()
	s.secret = nil
	s.mu.Unlock()
	return nil
}

// visit checks a token for the conversation id of the path and the page's
// origin: another conversation's id is refused whatever the token.
func (s *Service) visit(ctx context.Context, token, convID, origin string) (Claims, Settings, error) {
	k, err := s.key(ctx)
	if err != nil {
		return Claims{}, Settings{}, err
	}
	c, err := verify(k, token, s.cfg.Now())
	if err != nil {
		return c, Settings{}, err
	}
	if c.ConversationID != convID {
		return c, Settings{}, errs.New(errs.Forbidden, "visitor token is not for this conversation")
	}
	a, st, err := s.agent(ctx, c.AgentID, origin)
	if err != nil {
		return c, st, err
	}
	if a.OrgID != c.OrgID {
		return c, st, errToken
	}
	return c, st, nil
}

// History is the conversation so far, with a renewed token.
type History struct {
	Token        string             `json:"token"`
	Conversation conversations.View `json:"conversation"`
	Greeting     string             `json:"greeting"`
	Settings     Settings           `json:"settings"`
	Messages     []Message          `json:"messages"`
}

// Message is a message as a visitor sees it: the text and its citations.
// Never the tools the model called (their arguments and results are the
// organization's business data) nor the token usage; the authenticated
// conversation API shows those.
type Message struct {
	ID        string                   `json:"id"`
	Role      string                   `json:"role"`
	Content   string                   `json:"content"`
	Citations []conversations.Citation `json:"citations"`
	CreatedAt string                   `json:"createdAt"`
}

func public(m conversations.Message) Message {
	c := m.Citations
	if c == nil {
		c = []conversations.Citation{}
	}
	return Message{ID: m.ID, Role: m.Role, Content: m.Content, Citations: c, CreatedAt: m.CreatedAt}
}

// History reads the visitor's conversation.
func (s *Service) History(ctx context.Context, token, convID, origin string) (History, error) {
	c, st, err := s.visit(ctx, token, convID, origin)
	if err != nil {
		return History{}, err
	}
	v, err := s.d.Conv.Get(ctx, c.OrgID, convID)
	if err != nil {
		return History{}, err
	}
	tok, err := s.token(ctx, c)
	if err != nil {
		return History{}, err
	}
	msgs := make([]Message, 0, len(v.Messages))
	for _, m := range v.Messages {
		msgs = append(msgs, public(m))
	}
	v.Messages = nil
	return History{Token: tok, Conversation: v, Greeting: st.Greeting, Settings: st, Messages: msgs}, nil
}

// Send answers one visitor message; onDelta gets the answer as it is
// written. The limits are checked cheapest first. The message is counted
// against the agent's day and the address's share of it before the model
// is asked, and never given back: a visitor who goes away mid-answer, or
// a turn that fails, has still cost the model's work.
func (s *Service) Send(ctx context.Context, token, convID, origin, addr, content string, onDelta func(string)) (Message, error) {
	c, st, err := s.visit(ctx, token, convID, origin)
	if err != nil {
		return Message{}, err
	}
	if strings.TrimSpace(content) == "" {
		return Message{}, errs.InvalidField("content", "required")
	}
	if utf8.RuneCountInString(content) > s.cfg.MaxMessage {
		return Message{}, &errs.Error{Kind: errs.TooLarge, Field: "content",
			Message: fmt.Sprintf("content: at most %d characters", s.cfg.MaxMessage)}
	}
	if !s.streams.begin(convID) {
		return Message{}, limited("an answer is already being written in this conversation", time.Second)
	}
	defer s.streams.end(convID)
	now := s.cfg.Now()
	if ok, after, err := s.take(ctx, s.visitor, "visitor", convID, now); err != nil {
		return Message{}, err
	} else if !ok {
		return Message{}, limited("too many messages; wait a moment", after)
	}
	if ok, after, err := s.take(ctx, s.address, "addr", addrKey(addr), now); err != nil {
		return Message{}, err
	} else if !ok {
		return Message{}, limited("too many messages from this address; wait a moment", after)
	}
	limit := st.MaxPerDay
	if limit <= 0 {
		limit = s.cfg.DailyCap
	}
	day := now.UTC().Format(time.DateOnly)
	r, err := s.d.Store.CountMessage(ctx, c.AgentID, addrKey(addr), day, limit, AddressShare(limit))
	if err != nil {
		return Message{}, err
	}
	midnight := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	switch r {
	case widgetstore.AgentFull:
		return Message{}, limited("this chat has reached its messages for today", midnight.Sub(now))
	case widgetstore.AddressFull:
		return Message{}, limited("this address has sent its share of this chat's messages for today", midnight.Sub(now))
	}
	s.prune(ctx, now)
	m, err := s.d.Conv.Send(ctx, c.OrgID, convID, content, onDelta)
	if err != nil {
		return Message{}, err
	}
	return public(m), nil
}

// prune drops the per-address counts of days before yesterday, once a day
// per process (yesterday stays: processes' clocks differ a little).
func (s *Service) prune(ctx context.Context, now time.Time) {
	day := now.UTC().Add(-24 * time.Hour).Format(time.DateOnly)
	s.mu.Lock()
	due := s.pruned != day
	s.pruned = day
	s.mu.Unlock()
	if due && s.d.Store.PruneAddresses(ctx, day) != nil {
		s.mu.Lock()
		s.pruned = "" // the next message tries again
		s.mu.Unlock()
	}
}
