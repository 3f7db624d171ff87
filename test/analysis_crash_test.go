package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// TestAnalysisCrashSafety ends conversations while the model is down, so
// their analyses wait in the queue, kills agentd with SIGKILL, and restarts
// it on the same database with the model back: every analysis completes,
// the scripted model gives exactly one good answer per conversation and the
// log holds exactly one conversation.analyzed per conversation.
func TestAnalysisCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills agentd")
	}
	const n = 20
	model := llmtest.New(t)
	var down atomic.Bool
	var mu sync.Mutex
	answered := map[string]int{} // order number -> good analysis answers
	order := regexp.MustCompile(`order #(\d+)`)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		if !strings.Contains(r.All(), "You analyse a finished conversation") {
			return llmtest.Reply{Content: "Noted."}
		}
		if down.Load() {
			return llmtest.Reply{Status: 503}
		}
		m := order.FindStringSubmatch(r.All())
		if m == nil {
			return llmtest.Reply{Status: 400}
		}
		mu.Lock()
		answered[m[1]]++
		mu.Unlock()
		return llmtest.Reply{Content: `{"summary": "A customer placed order ` + m[1] + `.", "structuredData": {"ordered": true}, "success": true}`}
	})
	flags := []string{"--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted"}
	dir := t.TempDir()
	s := start(t, dir, flags...)
	key := s.newOrg("analysiscrash")
	agent := s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Shop", "type": "chat", "instructions": "Take orders."})
	agentID, _ := agent.json()["data"].(map[string]any)["id"].(string)
	if agent.status != 201 || agentID == "" {
		t.Fatalf("agent: %d %s", agent.status, agent.body)
	}
	plan := map[string]any{"summary": map[string]any{"enabled": true},
		"structuredData": map[string]any{"schema": map[string]any{"type": "object", "required": []string{"ordered"},
			"properties": map[string]any{"ordered": map[string]any{"type": "boolean"}}}},
		"successEvaluation": map[string]any{"rubric": "pass_fail"}}
	if r := s.must("PUT", "/api/v1/agents/"+agentID+"/analysis-plan", key, map[string]any{"analysisPlan": plan}); r.status != 200 {
		t.Fatalf("plan: %d %s", r.status, r.body)
	}
	ids := make([]string, n)
	for i := range ids {
		r := s.must("POST", "/api/v1/conversations", key, map[string]any{"agentId": agentID})
		ids[i], _ = r.json()["data"].(map[string]any)["id"].(string)
		if r.status != 201 || ids[i] == "" {
			t.Fatalf("conversation: %d %s", r.status, r.body)
		}
		if r := s.must("POST", "/api/v1/conversations/"+ids[i]+"/messages", key, map[string]any{"content": fmt.Sprintf("I want order #%d", i)}); r.status != 200 {
			t.Fatalf("message: %d %s", r.status, r.body)
		}
	}
	down.Store(true)
	for _, id := range ids {
		if r := s.must("POST", "/api/v1/conversations/"+id+"/end", key, nil); r.status != 200 {
			t.Fatalf("end: %d %s", r.status, r.body)
		}
	}
	// The worker has tried (and met the model down) before the kill.
	testkit.Within(10*time.Second, func() bool { return analysisRequests(model) > 0 })
	s.Kill()
	pending := 0
	down.Store(false)

	s = start(t, dir, flags...)
	deadline := time.Now().Add(90 * time.Second)
	for _, id := range ids {
		testkit.Eventually(t, time.Until(deadline), func() bool {
			r := s.must("GET", "/api/v1/conversations/"+id+"/analysis", key, nil)
			st, _ := r.json()["data"].(map[string]any)["status"].(string)
			if r.status == 200 && st == "completed" {
				return true
			}
			if st == "pending" {
				pending++
			}
			if r.status != 200 || (st != "pending" && st != "") {
				t.Fatalf("analysis of %s: %d %s", id, r.status, r.body)
			}
			return false
		}, "analysis of %s not completed", id)
	}
	mu.Lock()
	for i := range n {
		if c := answered[fmt.Sprint(i)]; c != 1 {
			t.Errorf("order #%d analysed %d times by the model", i, c)
		}
	}
	mu.Unlock()
	analyzed := map[string]int{}
	after := ""
	for {
		var page struct {
			Data struct {
				Events []struct {
					Type string          `json:"type"`
					Data json.RawMessage `json:"data"`
				} `json:"events"`
				NextCursor *string `json:"nextCursor"`
				HasMore    bool    `json:"hasMore"`
			} `json:"data"`
		}
		r := s.must("GET", "/api/v2/events?limit=500&after="+after, key, nil)
		if r.status != 200 || json.Unmarshal(r.body, &page) != nil {
			t.Fatalf("events: %d %s", r.status, r.body)
		}
		for _, ev := range page.Data.Events {
			if ev.Type == "conversation.analyzed" {
				analyzed[conversationID(ev.Data)]++
			}
		}
		if !page.Data.HasMore {
			break
		}
		after = *page.Data.NextCursor
	}
	for _, id := range ids {
		if analyzed[id] != 1 {
			t.Errorf("conversation %s: %d conversation.analyzed events", id, analyzed[id])
		}
	}
	t.Logf("%d conversations, %d model requests for analysis, pending polls after restart %d", n, analysisRequests(model), pending)
}

func analysisRequests(m *llmtest.Server) int {
	k := 0
	for _, r := range m.Got() {
		if strings.Contains(r.All(), "You analyse a finished conversation") {
			k++
		}
	}
	return k
}

// conversationID reads an analysis event's conversation.
func conversationID(data json.RawMessage) string {
	var d struct {
		ConversationID string `json:"conversationId"`
	}
	json.Unmarshal(data, &d)
	return d.ConversationID
}
