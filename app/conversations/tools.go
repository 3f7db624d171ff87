package conversations

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/signing"
	"github.com/agentd/agentd/storage/sqldb"
)

// MaxToolAnswer bounds what a url tool may answer (64 KB); the Poster
// must keep at least one byte more so a longer answer is recognised.
const MaxToolAnswer = 64 << 10

// newSecret is a fresh tools secret, in the webhooks' format.
func newSecret() string { return signing.NewSecret() }

// toolRequest is the body a url tool receives.
type toolRequest struct {
	ToolCallID     string         `json:"toolCallId"`
	Name           string         `json:"name"`
	Arguments      map[string]any `json:"arguments"`
	AgentID        string         `json:"agentId"`
	ConversationID *string        `json:"conversationId"`
	CallID         *string        `json:"callId"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// callURL POSTs the call to the tool's URL signed with Standard Webhooks
// headers and the organization's tools secret, through the forgery guard,
// within the tool timeout; the answer (<= 64 KB) is the tool's result.
func (s *Service) callURL(ctx context.Context, in runInput, t agentTool, c llm.ToolCall, args map[string]any) string {
	body, err := json.Marshal(toolRequest{ToolCallID: c.ID, Name: t.Name, Arguments: args, AgentID: in.agent.ID,
		ConversationID: optional(in.convID), CallID: optional(in.callID)})
	if err != nil {
		return toolError("arguments cannot be encoded")
	}
	now := time.Now()
	secrets, err := s.d.Store.ToolsSecret(ctx, in.orgID, now)
	if errors.Is(err, sqldb.ErrNotFound) {
		// Never made silently: an unsigned call could not be told from a
		// forged one, and a secret nobody saw cannot be checked.
		return toolError("tool %s was not called: the organization has no tools secret yet (POST /api/v2/tools/secret creates it)", t.Name)
	}
	if err != nil {
		s.d.Log.ErrorContext(ctx, "tools secret", "err", err)
		return toolError("tool %s could not be called", t.Name)
	}
	keys := []string{secrets.Secret}
	if secrets.Previous != "" {
		keys = append(keys, secrets.Previous) // receivers still on the previous one verify it
	}
	id := "tool_" + uuid.NewString()
	header := map[string]string{
		"content-type":      "application/json",
		"user-agent":        "agentd-tools",
		"webhook-id":        id,
		"webhook-timestamp": strconv.FormatInt(now.Unix(), 10),
		"webhook-signature": signing.Sign(id, now, body, keys...),
	}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.ToolTimeout)
	defer cancel()
	start := time.Now()
	status, answer, err := s.d.Tools.Post(tctx, t.URL, header, body)
	switch {
	case err != nil && ctx.Err() != nil:
		return toolError("canceled")
	case err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded):
		return toolError("tool %s did not answer within %s", t.Name, s.cfg.ToolTimeout)
	case err != nil:
		s.d.Log.WarnContext(ctx, "url tool failed", "tool", t.Name, "err", err)
		return toolError("tool %s could not be reached", t.Name)
	case status < 200 || status > 299:
		return toolError("tool %s answered status %d", t.Name, status)
	case len(answer) > MaxToolAnswer:
		return toolError("tool %s answered more than 64 KB", t.Name)
	}
	s.d.Log.DebugContext(ctx, "url tool", "tool", t.Name, "status", status, "duration", time.Since(start))
	if len(answer) == 0 {
		return `{"ok":true}`
	}
	return string(answer)
}
