package api

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/storage/convstore"
)

// BenchmarkAnalysesPerSecond is the analysis worker's throughput with the
// scripted model answering at once: b.N ended conversations wait in the
// queue (the model held back), then the timer runs until none is pending.
// The figure is analyses/s, each a model call, a schema validation and a
// result with its event written.
func BenchmarkAnalysesPerSecond(b *testing.B) {
	gate := make(chan struct{})
	model := llmtest.New(b)
	model.Answer(func(llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Reply{Content: goodAnswer}
	})
	e := &analysisEnv{testEnv: newTestEnv(b, func(c *serveConfig) {
		c.AnalysisPoll = 20 * time.Millisecond
		c.LLM.Kind, c.LLM.URL, c.LLM.Model, c.LLM.Timeout = "openai", model.URL, "scripted", 30*time.Second
	})}
	e.agentID = e.voiceAgent(e.orgID).ID
	if code, _, body := e.do("PUT", "/api/v1/agents/"+e.agentID+"/analysis-plan", e.key, map[string]any{"analysisPlan": bookingPlan}); code != 200 {
		b.Fatalf("plan: %d %s", code, body)
	}
	ctx := context.Background()
	st := e.db.Conversations
	for i := 0; i < b.N; i++ {
		c, _, err := st.Create(ctx, convstore.Conversation{OrgID: e.orgID, AgentID: e.agentID, Channel: "api"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.AppendTurn(ctx, e.orgID, c.ID, []convstore.Message{{Role: "user", Content: "Book me a demo on Tuesday."},
			{Role: "assistant", Content: "Done: Tuesday at ten."}}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.End(ctx, e.orgID, c.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	began := time.Now()
	close(gate)
	// A fine fixed poll, not a backing-off wait: the drain time is what
	// the benchmark measures, and a longer step would blur it.
	testkit.WithinEvery(time.Hour, 2*time.Millisecond, func() bool {
		next, err := e.db.Analyses.NextDue(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return next.IsZero()
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "analyses/s")
	if n := len(model.Got()); n != b.N {
		b.Fatalf("model asked %d times for %d analyses", n, b.N)
	}
}
