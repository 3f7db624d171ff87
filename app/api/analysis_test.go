package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// bookingPlan asks for a summary, {booked, interest} and a pass/fail verdict.
var bookingPlan = map[string]any{
	"summary": map[string]any{"enabled": true},
	"structuredData": map[string]any{"schema": map[string]any{
		"type": "object", "required": []string{"booked", "interest"}, "additionalProperties": false,
		"properties": map[string]any{"booked": map[string]any{"type": "boolean"},
			"interest": map[string]any{"enum": []string{"low", "medium", "high"}}}}},
	"successEvaluation": map[string]any{"rubric": "pass_fail"},
}

const goodAnswer = `{"summary": "The customer booked a demo.", "structuredData": {"booked": true, "interest": "high"}, "success": true}`

// analysisEnv is agentd with the scripted model (nil: builtin), the
// simulated dialer and a voice agent with bookingPlan.
type analysisEnv struct {
	*testEnv
	model   *llmtest.Server
	agentID string
}

func newAnalysisEnv(t *testing.T, scripted bool, extra ...func(*serveConfig)) *analysisEnv {
	t.Helper()
	var model *llmtest.Server
	opts := []func(*serveConfig){fastSim(30 * time.Millisecond), fastWebhooks, func(c *serveConfig) {
		c.AnalysisPoll, c.AnalysisRetry = 50*time.Millisecond, 100*time.Millisecond
	}}
	if scripted {
		model = llmtest.New(t)
		opts = append(opts, func(c *serveConfig) {
			c.LLM = llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 2 * time.Second}
		})
	}
	e := &analysisEnv{testEnv: newTestEnv(t, append(opts, extra...)...), model: model}
	e.agentID = e.voiceAgent(e.orgID).ID
	if code, _, b := e.do("PUT", "/api/v1/agents/"+e.agentID+"/analysis-plan", e.key, map[string]any{"analysisPlan": bookingPlan}); code != 200 {
		t.Fatalf("put plan: %d %s", code, b)
	}
	return e
}

// endedCall places a call, waits for its end and posts its transcript.
func (e *analysisEnv) endedCall(key, agentID, phone string) string {
	e.t.Helper()
	id := e.outbound(key, agentID, phone)
	if c := e.waitFinal(key, id, 10*time.Second); c.Status != "completed" {
		e.t.Fatalf("sim call: %s", c.Status)
	}
	body := map[string]any{"transcript": []map[string]any{
		{"role": "agent", "text": "Hi, this is Ada from Acme. Would you like a demo?", "at": "2026-06-10T14:00:01Z"},
		{"role": "user", "text": "Yes, Tuesday at ten please.", "at": "2026-06-10T14:00:05Z"},
	}}
	if code, _, b := e.do("POST", "/api/v1/calls/"+id+"/result", key, body); code != 200 {
		e.t.Fatalf("result: %d %s", code, b)
	}
	return id
}

// waitAnalysis polls the call's analysis until it is no longer pending.
func (e *analysisEnv) waitAnalysis(key, id string) analysis.View {
	e.t.Helper()
	var out struct{ Data analysis.View }
	testkit.Eventually(e.t, 10*time.Second, func() bool {
		code := e.doJSON("GET", "/api/v1/calls/"+id+"/analysis", key, nil, &out)
		return code == 200 && out.Data.Status != "pending"
	}, "analysis of %s still pending", id)
	return out.Data
}

func TestAnalysisCompletesAndValidates(t *testing.T) {
	e := newAnalysisEnv(t, true)
	e.model.Push(llmtest.Reply{Content: "```json\n" + goodAnswer + "\n```"})
	rc := newReceiver(t, nil)
	_, secret := e.createWebhook(e.key, rc.srv.URL, "call.analyzed")

	id := e.endedCall(e.key, e.agentID, "+14155550100")
	v := e.waitAnalysis(e.key, id)
	if v.Status != "completed" || string(v.StructuredData) != `{"booked":true,"interest":"high"}` || v.Success != true ||
		v.Summary == nil || *v.Summary != "The customer booked a demo." || v.AnalyzedAt == nil || v.Model == nil {
		t.Fatalf("analysis %+v", v)
	}
	// The model saw the schema and the transcript.
	got := e.model.Got()
	if len(got) != 1 || !strings.Contains(got[0].All(), `"interest"`) || !strings.Contains(got[0].All(), "Tuesday at ten") {
		t.Fatalf("model got %d requests: %s", len(got), got[0].All())
	}
	// call.analyzed reaches the webhook receiver, signed.
	r := rc.waitFor(5*time.Second, "call.analyzed", hasType("call.analyzed", 1))[0]
	wh, _ := standardwebhooks.NewWebhook(secret)
	if err := wh.Verify(r.Body, r.Header); err != nil {
		t.Fatalf("signature: %v", err)
	}
	var data analysis.EventData
	if err := json.Unmarshal(r.Event.Data, &data); err != nil || data.CallID != id || data.Analysis.Status != "completed" {
		t.Fatalf("event data %s", r.Event.Data)
	}

	// Re-analysis runs the model again and completes again.
	e.model.Push(llmtest.Reply{Content: strings.Replace(goodAnswer, `"high"`, `"low"`, 1)})
	if code, _, b := e.do("POST", "/api/v1/calls/"+id+"/analyze", e.key, nil); code != 202 {
		t.Fatalf("analyze: %d %s", code, b)
	}
	if v := e.waitAnalysis(e.key, id); v.Status != "completed" || string(v.StructuredData) != `{"booked":true,"interest":"low"}` {
		t.Fatalf("re-analysis %+v", v)
	}
}

func TestAnalysisInvalidAnswerRetriedOnceThenFailed(t *testing.T) {
	e := newAnalysisEnv(t, true)
	bad := `{"summary": "x", "structuredData": {"booked": "yes", "interest": "huge"}, "success": true}`
	e.model.Push(llmtest.Reply{Content: bad}, llmtest.Reply{Content: bad}, llmtest.Reply{Content: goodAnswer})
	id := e.endedCall(e.key, e.agentID, "+14155550101")
	v := e.waitAnalysis(e.key, id)
	if v.Status != "failed" || v.Error == nil || !strings.Contains(*v.Error, "/booked") || !strings.Contains(*v.Error, "/interest") {
		t.Fatalf("analysis %+v (error %v)", v, deref(v.Error))
	}
	got := e.model.Got()
	if len(got) != 2 {
		t.Fatalf("model asked %d times, want 2", len(got))
	}
	if last := got[1].Messages[len(got[1].Messages)-1].Text(); !strings.Contains(last, "does not validate") || !strings.Contains(last, "/interest") {
		t.Fatalf("retry message %q", last)
	}
}

func TestAnalysisModelDownThenBack(t *testing.T) {
	e := newAnalysisEnv(t, true)
	e.model.Push(llmtest.Reply{Status: 503}, llmtest.Reply{Status: 503}, llmtest.Reply{Content: goodAnswer})
	id := e.endedCall(e.key, e.agentID, "+14155550102")
	if v := e.waitAnalysis(e.key, id); v.Status != "completed" {
		t.Fatalf("analysis %+v (error %v)", v, deref(v.Error))
	}
	if n := len(e.model.Got()); n != 3 {
		t.Fatalf("model asked %d times, want 3", n)
	}
}

func TestAnalysisBuiltinSkipped(t *testing.T) {
	e := newAnalysisEnv(t, false)
	id := e.endedCall(e.key, e.agentID, "+14155550103")
	v := e.waitAnalysis(e.key, id)
	if v.Status != "skipped" || v.Error == nil || !strings.Contains(*v.Error, "--llm builtin") || v.Summary != nil || string(v.StructuredData) != "null" {
		t.Fatalf("analysis %+v", v)
	}

	// A conversation's end queues its analysis too.
	var conv struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/conversations", e.key, map[string]any{"agentId": e.agentID}, &conv); code != 201 {
		t.Fatalf("conversation: %d", code)
	}
	if code, _, b := e.do("POST", "/api/v1/conversations/"+conv.Data.ID+"/messages", e.key, map[string]any{"content": "Hello"}); code != 200 {
		t.Fatalf("message: %d %s", code, b)
	}
	if code, _, b := e.do("GET", "/api/v1/conversations/"+conv.Data.ID+"/analysis", e.key, nil); code != 404 {
		t.Fatalf("analysis before the end: %d %s", code, b)
	}
	e.do("POST", "/api/v1/conversations/"+conv.Data.ID+"/end", e.key, nil)
	testkit.Eventually(t, 10*time.Second, func() bool {
		var out struct{ Data analysis.View }
		code := e.doJSON("GET", "/api/v1/conversations/"+conv.Data.ID+"/analysis", e.key, nil, &out)
		return code == 200 && out.Data.Status == "skipped"
	}, "conversation analysis not skipped")

	// Bulk re-analysis needs a selection; progress needs a batch.
	if code, _, b := e.do("POST", "/api/v1/analyses", e.key, map[string]any{}); code != 400 {
		t.Errorf("empty bulk: %d %s", code, b)
	}
	if code, _, b := e.do("GET", "/api/v1/analyses", e.key, nil); code != 400 {
		t.Errorf("progress without batchId: %d %s", code, b)
	}
}

func TestAnalysisPlanValidation(t *testing.T) {
	e := newAnalysisEnv(t, false)
	for _, c := range []struct {
		plan any
		want string
	}{
		{map[string]any{"successEvaluation": map[string]any{"rubric": "stars"}}, "rubric"},
		{map[string]any{"structuredData": map[string]any{"schema": map[string]any{"type": "nope"}}}, "not a valid JSON Schema"},
		{map[string]any{"structuredData": map[string]any{"schema": map[string]any{"$ref": "file:///etc/passwd"}}}, "not a valid JSON Schema"},
		{map[string]any{"structuredData": map[string]any{"schema": map[string]any{"description": strings.Repeat("x", 33<<10)}}}, "max 32768"},
		{map[string]any{"bogus": 1}, "analysisPlan"},
		{map[string]any{}, "asks for nothing"},
	} {
		code, _, b := e.do("PUT", "/api/v1/agents/"+e.agentID+"/analysis-plan", e.key, map[string]any{"analysisPlan": c.plan})
		if code != 400 || !strings.Contains(string(b), c.want) {
			t.Errorf("plan %v: %d %s", c.plan, code, b)
		}
	}
	var out struct {
		Data struct{ AnalysisPlan map[string]any }
	}
	if e.doJSON("GET", "/api/v1/agents/"+e.agentID+"/analysis-plan", e.key, nil, &out); out.Data.AnalysisPlan["successEvaluation"] == nil {
		t.Fatalf("a refused plan changed the stored one: %+v", out.Data)
	}
}

// Every analysis route answers another organization's resources as missing.
func TestAnalysisTenantIsolation(t *testing.T) {
	e := newAnalysisEnv(t, false)
	id := e.endedCall(e.key, e.agentID, "+14155550104")
	e.waitAnalysis(e.key, id)
	_, otherKey := e.newOrg("Other")
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/agents/" + e.agentID + "/analysis-plan"},
		{"PUT", "/api/v1/agents/" + e.agentID + "/analysis-plan"},
		{"GET", "/api/v1/calls/" + id + "/analysis"},
		{"POST", "/api/v1/calls/" + id + "/analyze"},
		{"GET", "/api/v1/conversations/" + id + "/analysis"},
	} {
		var body any
		if r.method == "PUT" {
			body = map[string]any{"analysisPlan": bookingPlan}
		}
		if code, _, b := e.do(r.method, r.path, otherKey, body); code != 404 {
			t.Errorf("%s %s from another org: %d %s", r.method, r.path, code, b)
		}
	}
	var bulk struct{ Data analysis.Progress }
	if code := e.doJSON("POST", "/api/v1/analyses", otherKey, map[string]any{"callIds": []string{id}}, &bulk); code != 202 || bulk.Data.Queued != 0 {
		t.Errorf("bulk from another org: %d %+v", code, bulk.Data)
	}
	if code := e.doJSON("POST", "/api/v1/analyses", otherKey, map[string]any{"agentId": e.agentID}, &bulk); code != 202 || bulk.Data.Queued != 0 {
		t.Errorf("bulk by agent from another org: %d %+v", code, bulk.Data)
	}
	if code := e.doJSON("POST", "/api/v1/analyses", e.key, map[string]any{"callIds": []string{id}}, &bulk); code != 202 || bulk.Data.Queued != 1 {
		t.Errorf("bulk from the owner: %d %+v", code, bulk.Data)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// A voice worker's turns through the OpenAI-compatible endpoint with
// x-agentd-call-id are the call's transcript (GET shows them, no result
// POST), and the call's end queues its analysis over them.
func TestAnalysisVoiceCallTranscript(t *testing.T) {
	e := newAnalysisEnv(t, true, fastSim(1500*time.Millisecond))
	id := e.outbound(e.key, e.agentID, "+14155550105")
	e.waitCall(e.key, id, 10*time.Second, func(c callView) bool { return c.Status == "active" })
	for _, q := range []string{"Can I book a demo?", "Tuesday at ten."} {
		e.model.Push(llmtest.Reply{Content: "Sure: " + q})
		if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": e.agentID,
			"messages": []any{map[string]any{"role": "user", "content": q}}}, "x-agentd-call-id", id); code != 200 {
			t.Fatalf("turn: %d %s", code, b)
		}
	}
	var got struct {
		Data struct {
			Transcript []struct{ Role, Text string }
		}
	}
	e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &got)
	if tr := got.Data.Transcript; len(tr) != 4 || tr[0].Role != "user" || tr[0].Text != "Can I book a demo?" || tr[3].Role != "agent" || tr[3].Text != "Sure: Tuesday at ten." {
		t.Fatalf("call transcript %+v", tr)
	}
	e.model.Push(llmtest.Reply{Content: goodAnswer})
	if c := e.waitFinal(e.key, id, 10*time.Second); c.Status != "completed" {
		t.Fatalf("call %s", c.Status)
	}
	if v := e.waitAnalysis(e.key, id); v.Status != "completed" {
		t.Fatalf("analysis %+v (error %v)", v, deref(v.Error))
	}
	if last := e.model.Last().All(); !strings.Contains(last, "user: Tuesday at ten.") || !strings.Contains(last, "agent: Sure: Can I book a demo?") {
		t.Fatalf("the analysis did not read the call's transcript: %s", last)
	}
}

// ownerCookie sets the owner's password through the setup page, as a
// browser would, and returns the session cookie.
func ownerCookie(t *testing.T, e *testEnv) *http.Cookie {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token := e.setupLink[strings.Index(e.setupLink, "token=")+len("token="):]
	req, _ := http.NewRequest("POST", e.url+"/setup", strings.NewReader(url.Values{"token": {token},
		"password": {"a long password"}, "confirm": {"a long password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			return c
		}
	}
	t.Fatalf("setup: %d, no session cookie", resp.StatusCode)
	return nil
}

func page(t *testing.T, e *testEnv, c *http.Cookie, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", e.url+path, nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// The call's page shows its analysis; the batch's page its success rate
// and a chart of each enum or boolean field's answers.
func TestAnalysisDashboard(t *testing.T) {
	e := newAnalysisEnv(t, true)
	answers := []string{goodAnswer, strings.Replace(strings.Replace(goodAnswer, `"success": true`, `"success": false`, 1), `"booked": true`, `"booked": false`, 1)}
	n := 0
	var mu sync.Mutex
	e.model.Answer(func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		n++
		return llmtest.Reply{Content: answers[n%2]}
	})
	var batch struct {
		Data struct {
			BatchID string `json:"batchId"`
			Results []struct {
				CallID string `json:"callId"`
			} `json:"results"`
		}
	}
	if code := e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": e.agentID, "calls": []map[string]any{
		{"contactPhone": "+14155550110"}, {"contactPhone": "+14155550111"}}}, &batch); code != 201 || len(batch.Data.Results) != 2 {
		t.Fatalf("batch: %d %+v", code, batch)
	}
	ids := []string{batch.Data.Results[0].CallID, batch.Data.Results[1].CallID}
	body := map[string]any{"transcript": []map[string]any{{"role": "user", "text": "Maybe.", "at": "2026-06-10T14:00:05Z"}}}
	for _, id := range ids {
		e.waitFinal(e.key, id, 10*time.Second)
		if code, _, b := e.do("POST", "/api/v1/calls/"+id+"/result", e.key, body); code != 200 {
			t.Fatalf("result: %d %s", code, b)
		}
		if v := e.waitAnalysis(e.key, id); v.Status != "completed" {
			t.Fatalf("analysis %+v", v)
		}
	}
	var p struct{ Data analysis.Progress }
	e.doJSON("GET", "/api/v1/analyses?batchId="+batch.Data.BatchID, e.key, nil, &p)
	if p.Data.Total != 2 || p.Data.Completed != 2 || p.Data.SuccessRate == nil || *p.Data.SuccessRate != 0.5 ||
		p.Data.Fields["booked"]["true"] != 1 || p.Data.Fields["booked"]["false"] != 1 || p.Data.Fields["interest"]["high"] != 2 {
		t.Fatalf("progress %+v", p.Data)
	}
	c := ownerCookie(t, e.testEnv)
	call := page(t, e.testEnv, c, "/calls/"+ids[0])
	if !strings.Contains(call, `data-analysis="completed"`) || !strings.Contains(call, "The customer booked a demo.") || !strings.Contains(call, "interest") {
		t.Fatalf("call page lacks the analysis:\n%s", call)
	}
	camp := page(t, e.testEnv, c, "/batches/"+batch.Data.BatchID)
	for _, want := range []string{`data-field="successRate">50%`, `data-field-chart="booked"`, `data-field-chart="interest"`, `aria-label="interest high"`} {
		if !strings.Contains(camp, want) {
			t.Errorf("batch page lacks %s", want)
		}
	}
	if chromiumPath() != "" {
		answersOnAPhone(t, e.testEnv, "/batches/"+batch.Data.BatchID)
	}
}

// answersOnAPhone signs the owner in (the password ownerCookie set) and
// looks at the campaign's answers at 360 px: each answer's count is on
// the screen and no table scrolls sideways.
func answersOnAPhone(t *testing.T, e *testEnv, path string) {
	ctx := startBrowser(t)
	shots := screenshots(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800), chromedp.Navigate(e.url+"/login"), chromedp.WaitVisible(css("#email")),
		chromedp.SendKeys(css("#email"), "owner@localhost"), chromedp.SendKeys(css("#password"), "a long password"),
		chromedp.Submit(css("#email")), chromedp.WaitVisible(css("section.cards")),
		chromedp.Navigate(e.url+path), chromedp.WaitVisible(css("[data-field-chart] table"))); err != nil {
		t.Fatalf("campaign page at 360 px: %v", err)
	}
	counts := get(ctx, t, "answer counts", chromedp.Evaluate[int](`Array.from(document.querySelectorAll("[data-field-chart] td.num")).filter((c) => {
		const b = c.getBoundingClientRect(); return b.width > 0 && b.left >= 0 && b.right <= window.innerWidth }).length`))
	if counts != 3 {
		t.Errorf("campaign page at 360 px: %d of the 3 answers' counts on the screen", counts)
	}
	tablesFit(t, ctx, shots, "360-campaign-answers")
	if err := chromedp.Do(ctx, shoot(shots, "360-campaign-answers")); err != nil {
		t.Fatal(err)
	}
}
