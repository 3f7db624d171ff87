package conversations

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/listingstore"
)

// maxContent bounds one user message (32,000 characters).
const maxContent = 32000

// Send runs one turn of a conversation: the user's content, the answer
// (its text given to onDelta as it comes). Both messages are stored
// together after the answer is complete: a failed turn stores nothing.
func (s *Service) Send(ctx context.Context, orgID, convID, content string, onDelta func(string)) (Message, error) {
	c, err := s.d.Store.Get(ctx, orgID, convID)
	if err != nil {
		return Message{}, convErr(err)
	}
	if err := checkContent(content); err != nil {
		return Message{}, err
	}
	if c.Status != "active" {
		return Message{}, errs.New(errs.Conflict, "conversation has ended")
	}
	a, err := s.agent(ctx, orgID, c.AgentID)
	if err != nil {
		return Message{}, err
	}
	stored, err := s.d.Store.Messages(ctx, convID)
	if err != nil {
		return Message{}, err
	}
	history := make([]llm.Message, 0, len(stored))
	for _, m := range stored {
		history = append(history, llm.Message{Role: m.Role, Content: m.Content})
	}
	res, err := s.run(ctx, runInput{orgID: orgID, agent: a, convID: c.ID, callID: c.CallID,
		history: history, user: content, onDelta: onDelta})
	if err != nil {
		return Message{}, err
	}
	msgs, err := s.d.Store.AppendTurn(ctx, orgID, convID, []convstore.Message{{Role: "user", Content: content}, res.stored()})
	if err != nil {
		return Message{}, convErr(err)
	}
	return messageView(msgs[1]), nil
}

func checkContent(content string) error {
	switch {
	case strings.TrimSpace(content) == "":
		return errs.InvalidField("content", "required")
	case utf8.RuneCountInString(content) > maxContent:
		return errs.InvalidField("content", fmt.Sprintf("at most %d characters", maxContent))
	}
	return nil
}

// runInput is one turn to answer.
type runInput struct {
	orgID          string
	agent          agentstore.Agent
	convID, callID string
	history        []llm.Message // the messages before this turn
	user           string        // the new user message ("" when the caller sent tool results)
	query          string        // what retrieval searches ("" : user)
	callerTools    []llm.Tool    // the caller's own tools (OpenAI-compatible endpoint)
	extra          map[string]json.RawMessage
	onDelta        func(string)
	// call is the live call a LiveKit worker's turn names (x-agentd-call-id)
	// and calls the store to record its transfer_call: zero otherwise.
	call  callstore.Call
	calls CallStore
}

// result is a turn's answer.
type result struct {
	content   string
	citations []Citation
	toolCalls []ToolCall     // the tools agentd ran
	pending   []llm.ToolCall // calls of the caller's tools, for the caller to run
	usage     llm.Usage
	finish    string
}

func (r result) stored() convstore.Message {
	cites, _ := json.Marshal(nonNil(r.citations))
	calls, _ := json.Marshal(nonNil(r.toolCalls))
	usage, _ := json.Marshal(r.usage)
	return convstore.Message{Role: "assistant", Content: r.content, Citations: cites, ToolCalls: calls, Usage: usage}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// passage is a retrieved passage with its score.
type passage struct {
	Citation
	score float64
}

// run answers one turn: retrieval, then the builtin engine or the model
// with its tool rounds, all within the turn deadline.
func (s *Service) run(ctx context.Context, in runInput) (result, error) {
	return s.withTurnDeadline(ctx, func(ctx context.Context) (result, error) { return s.runTurn(ctx, in) })
}

func (s *Service) runTurn(ctx context.Context, in runInput) (result, error) {
	k := agents.ParseKnowledge(in.agent.Knowledge)
	query := in.query
	if query == "" {
		query = in.user
	}
	ps, err := s.retrieve(ctx, in.orgID, k, query, k.TopK)
	if err != nil {
		return result{}, err
	}
	if len(ps) == 0 && s.cfg.Model != nil {
		// A follow-up ("and on Sundays?") is searched with the turn before
		// it. Not for builtin, which would quote the previous answer again
		// to an unrelated question instead of saying it does not know.
		if prev := lastUser(in.history); prev != "" {
			if ps, err = s.retrieve(ctx, in.orgID, k, prev+"\n"+query, k.TopK); err != nil {
				return result{}, err
			}
		}
	}
	if s.cfg.Model == nil {
		res := s.builtin(in.agent, ps, in.onDelta)
		msgs := in.history
		if in.user != "" {
			msgs = append(msgs[:len(msgs):len(msgs)], llm.Message{Role: "user", Content: in.user})
		}
		res.usage = s.countUsage(msgs, nil, res.content, nil)
		return res, nil
	}
	return s.generate(ctx, in, k, ps)
}

func lastUser(ms []llm.Message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == "user" {
			return ms[i].Content
		}
	}
	return ""
}

// retrieve searches the agent's collections (each must be the
// organization's: the knowledge service refuses any other) and, when the
// agent has listings, the organization's listings; the topK best overall.
func (s *Service) retrieve(ctx context.Context, orgID string, k agents.Knowledge, query string, topK int) ([]passage, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, nil
	}
	var out []passage
	q := truncateRunes(query, 4000)
	for _, id := range k.CollectionIDs {
		rs, err := s.d.Knowledge.Search(ctx, orgID, kb.SearchInput{CollectionID: id, Query: &q, Limit: &topK})
		switch {
		case errs.Is(err, errs.NotFound):
			continue // deleted since, or never the organization's
		case err != nil:
			return nil, err
		}
		for _, r := range rs {
			out = append(out, passage{Citation{SourceID: r.DocumentID, ExternalID: r.ExternalID, Title: r.Title, Text: r.Content}, r.Score})
		}
	}
	if k.Listings && s.d.Listings != nil {
		hits, err := s.d.Listings.Search(ctx, listings.Query{Text: truncateRunes(query, 1000),
			Filter: listingstore.ListingFilter{OrgID: orgID}, Limit: topK})
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			score := 0.0
			if h.Score != nil {
				score = *h.Score
			}
			out = append(out, passage{listingCitation(h.Listing), score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out[:min(len(out), topK)], nil
}

func listingCitation(l listingstore.Listing) Citation {
	var b strings.Builder
	b.WriteString(l.Description)
	if p := listings.Price(l); p != nil {
		fmt.Fprintf(&b, "\nPrice: %s", strings.TrimSpace(*p+" "+l.Currency))
	}
	if l.Category != "" {
		b.WriteString("\nCategory: " + l.Category)
	}
	if len(l.Attributes) > 2 {
		b.WriteString("\nAttributes: " + string(l.Attributes))
	}
	if l.SourceURL != "" {
		b.WriteString("\nURL: " + l.SourceURL)
	}
	return Citation{SourceID: l.ID, ExternalID: l.ExternalID, Title: l.Title, Text: strings.TrimSpace(b.String())}
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// builtin answers without a model: the best passage quoted with its title
// (and the next when it is nearly as good), or the agent's fallback when
// nothing cleared the search's relevance floor. It never generates.
func (s *Service) builtin(a agentstore.Agent, ps []passage, onDelta func(string)) result {
	var res result
	if len(ps) == 0 {
		res.content = agents.DefaultFallback
		if a.Fallback != nil && strings.TrimSpace(*a.Fallback) != "" {
			res.content = *a.Fallback
		}
	} else {
		var parts []string
		for i, p := range ps {
			if i > 0 && (i >= 2 || p.score < 0.8*ps[0].score) {
				break
			}
			title := p.Title
			if title == "" {
				title = p.ExternalID
			}
			parts = append(parts, fmt.Sprintf("From %q:\n\n%s", title, strings.TrimSpace(p.Text)))
			res.citations = append(res.citations, p.Citation)
		}
		res.content = strings.Join(parts, "\n\n")
	}
	res.finish = "stop"
	if onDelta != nil {
		onDelta(res.content)
	}
	return res
}
