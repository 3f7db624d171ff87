package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// A hostile model's stream ends in a 502 naming the bound it broke: an
// endless stream of big chunks, one endless line.
func TestStreamBounds(t *testing.T) {
	s := llmtest.New(t)
	c := newClient(t, s.URL, 30*time.Second)
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		bound string
	}{
		{"flood", llmtest.Reply{Content: "hi ", Flood: 60 << 10}, "llm.MaxAnswerText"},
		{"huge line", llmtest.Reply{HugeLine: 8 << 20}, "llm.MaxStreamLine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Push(tc.reply)
			delivered := 0
			_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}},
				func(d string) { delivered += len(d) })
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.BadGateway || e.Code != llm.CodeTooLarge ||
				!strings.Contains(e.Message, "answer too large") || !strings.Contains(e.Message, tc.bound) {
				t.Fatalf("err %v", err)
			}
			if delivered > llm.MaxAnswerText {
				t.Fatalf("%d bytes of deltas", delivered)
			}
		})
	}
}

// Events past MaxAnswerChunks (about one token each) end the answer,
// however little each carries.
func TestStreamEventBound(t *testing.T) {
	r := strings.NewReader(strings.Repeat("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", llm.MaxAnswerChunks+1))
	_, err := llm.ParseStream(r, nil)
	if !errors.Is(err, llm.ErrAnswerTooLarge) || !strings.Contains(err.Error(), "llm.MaxAnswerChunks") {
		t.Fatalf("err %v", err)
	}
}

// The raw byte bound holds for streams whose events carry nothing counted
// (keep-alive comments without end).
func TestStreamByteBound(t *testing.T) {
	r := strings.NewReader(strings.Repeat(": keep-alive\n", llm.MaxStreamBytes/12))
	_, err := llm.ParseStream(r, nil)
	if !errors.Is(err, llm.ErrAnswerTooLarge) || !strings.Contains(err.Error(), "llm.MaxStreamBytes") {
		t.Fatalf("err %v", err)
	}
}
