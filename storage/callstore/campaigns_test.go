package callstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// campaignFixture is a database with one organization and a voice agent.
func campaignFixture(t *testing.T, config string) (*storage.Stores, string, agentstore.Agent) {
	t.Helper()
	db, org := storetest.WithOrg(t)
	a, err := db.Agents.CreateAgent(context.Background(), agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active",
		Config: json.RawMessage(config), PhoneNumbers: []string{"+15550001111"}})
	if err != nil {
		t.Fatal(err)
	}
	return db, org, a
}

func queuedCalls(org, agent string, n int, due time.Time) []callstore.Call {
	out := make([]callstore.Call, n)
	for i := range out {
		out[i] = callstore.Call{OrgID: org, AgentID: agent, Status: callstore.CallQueued, PhoneNumber: fmt.Sprintf("+1415555%04d", i), DueAt: due}
	}
	return out
}

func claim(t *testing.T, db *storage.Stores, now time.Time) (callstore.Call, bool) {
	t.Helper()
	c, ok, err := db.Calls.ClaimNextCall(context.Background(), callstore.Claim{Token: fmt.Sprint(time.Now().UnixNano()), WorkerID: "w",
		Now: now, LeaseUntil: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return c, ok
}

// A paused batch's calls are neither promoted nor claimed; resuming lets
// them go; cancelling cancels every open call and reports the live ones.
func TestBatchPauseResumeCancel(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	now := time.Now().UTC()
	b, created, err := db.Calls.CreateBatch(ctx, callstore.Batch{OrgID: org, AgentID: a.ID, Name: "spring"}, queuedCalls(org, a.ID, 3, now))
	if err != nil || len(created) != 3 || created[0].BatchID != b.ID {
		t.Fatalf("create: %v %+v", err, created)
	}
	live, ok := claim(t, db, now)
	if !ok {
		t.Fatal("nothing claimed")
	}
	if err := db.Calls.PauseBatch(ctx, org, b.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := claim(t, db, now); ok {
		t.Fatal("claimed a call of a paused batch")
	}
	if n, err := db.Calls.PromoteDueCalls(ctx, now.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("promoted %d calls of a paused batch (%v)", n, err)
	}
	if _, ok, _ := db.Calls.NextDue(ctx, callstore.CallScheduled); ok {
		t.Fatal("a paused batch's call counts as next due")
	}
	got, err := db.Calls.GetBatch(ctx, org, b.ID)
	if err != nil || got.Status != callstore.BatchPaused || got.Counts[callstore.CallScheduled] != 2 || got.Counts[callstore.CallConnecting] != 1 ||
		got.Total != 3 || got.Attempts != 1 || got.Name != "spring" || got.AgentName != "a" {
		t.Fatalf("paused batch: %v %+v", err, got)
	}
	if err := db.Calls.ResumeBatch(ctx, org, b.ID, now); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Calls.PromoteDueCalls(ctx, now); err != nil || n != 2 {
		t.Fatalf("resume: promoted %d (%v)", n, err)
	}
	n, liveIDs, err := db.Calls.CancelBatch(ctx, org, b.ID, now)
	if err != nil || n != 3 || len(liveIDs) != 1 || liveIDs[0] != live.ID {
		t.Fatalf("cancel: %d %v %v", n, liveIDs, err)
	}
	if _, ok := claim(t, db, now); ok {
		t.Fatal("claimed a call of a cancelled batch")
	}
	if err := db.Calls.ResumeBatch(ctx, org, b.ID, now); !errors.Is(err, callstore.ErrBatchState) {
		t.Fatalf("resume a cancelled batch: %v", err)
	}
	bs, total, err := db.Calls.ListBatches(ctx, callstore.BatchFilter{OrgID: org, Status: callstore.BatchCancelled})
	if err != nil || total != 1 || len(bs) != 1 || bs[0].Counts[callstore.CallCancelled] != 3 {
		t.Fatalf("list cancelled: %v %d %+v", err, total, bs)
	}
	if _, total, _ := db.Calls.ListBatches(ctx, callstore.BatchFilter{OrgID: org, Status: callstore.BatchRunning}); total != 0 {
		t.Fatalf("%d running batches", total)
	}
	if _, err := db.Calls.GetBatch(ctx, "other-org", b.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another org's batch: %v", err)
	}
}

// An agent's maxConcurrentCalls caps its live calls at claim time; other
// agents' calls are still taken.
func TestClaimRespectsAgentConcurrency(t *testing.T) {
	ctx := context.Background()
	db, org, capped := campaignFixture(t, `{"maxConcurrentCalls":2}`)
	free, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "b", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := db.Calls.CreateCalls(ctx, queuedCalls(org, capped.ID, 5, now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Calls.CreateCalls(ctx, queuedCalls(org, free.ID, 1, now)); err != nil {
		t.Fatal(err)
	}
	var agents []string
	for {
		c, ok := claim(t, db, now)
		if !ok {
			break
		}
		agents = append(agents, c.AgentID)
	}
	if len(agents) != 3 || agents[0] != capped.ID || agents[1] != capped.ID || agents[2] != free.ID {
		t.Fatalf("claimed agents %v", agents)
	}
}

// Listing numbers fails the waiting calls to them, and only the listing
// organization's; the check and the page never see another organization's
// numbers.
func TestDNCListIsPerOrganization(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: other.ID, Name: "b", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	mine, _ := db.Calls.CreateCalls(ctx, queuedCalls(org, a.ID, 2, now.Add(time.Hour)))
	theirs, _ := db.Calls.CreateCalls(ctx, queuedCalls(other.ID, b.ID, 1, now.Add(time.Hour)))
	added, failed, err := db.Calls.AddDNC(ctx, org, []string{"+14155550000", "+14155559999"}, "asked", now)
	if err != nil || added != 2 || failed != 1 {
		t.Fatalf("add: %d %d %v", added, failed, err)
	}
	if again, _, _ := db.Calls.AddDNC(ctx, org, []string{"+14155550000"}, "", now); again != 0 {
		t.Fatalf("re-added %d", again)
	}
	c, _ := db.Calls.GetCall(ctx, org, mine[0].ID)
	if c.Status != callstore.CallFailed || c.FailureReason != callstore.ReasonDoNotCall {
		t.Fatalf("listed call: %s %q", c.Status, c.FailureReason)
	}
	if c, _ := db.Calls.GetCall(ctx, org, mine[1].ID); c.Status != callstore.CallQueued {
		t.Fatalf("unlisted call: %s", c.Status)
	}
	if c, _ := db.Calls.GetCall(ctx, other.ID, theirs[0].ID); c.Status != callstore.CallQueued {
		t.Fatalf("other org's call to the same number: %s", c.Status)
	}
	if ok, _ := db.Calls.DNCListed(ctx, other.ID, "+14155550000"); ok {
		t.Fatal("number listed in the other organization")
	}
	if ok, _ := db.Calls.DNCListed(ctx, org, "+14155550000"); !ok {
		t.Fatal("number not listed")
	}
	if page, total, _ := db.Calls.ListDNC(ctx, other.ID, "", 10, 0); total != 0 || len(page) != 0 {
		t.Fatalf("other org sees %d numbers", total)
	}
	page, total, err := db.Calls.ListDNC(ctx, org, "", 10, 0)
	if err != nil || total != 2 || page[0].PhoneNumber != "+14155550000" || page[0].Reason != "asked" {
		t.Fatalf("list: %v %d %+v", err, total, page)
	}
	if n, _ := db.Calls.RemoveDNC(ctx, other.ID, []string{"+14155550000"}); n != 0 {
		t.Fatal("the other organization removed our number")
	}
	if n, _ := db.Calls.RemoveDNC(ctx, org, []string{"+14155550000", "+19999999999"}); n != 1 {
		t.Fatalf("removed %d", n)
	}
	among, err := db.Calls.DNCListedAmong(ctx, org, []string{"+14155550000", "+14155559999"})
	if err != nil || len(among) != 1 || !among["+14155559999"] {
		t.Fatalf("among: %v %v", among, err)
	}
}

// A claim given back is not counted as an attempt: deferred to a later
// time, or failed without a dial.
func TestUndoClaim(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	now := time.Now().UTC()
	created, _ := db.Calls.CreateCalls(ctx, queuedCalls(org, a.ID, 2, now))
	c1, _ := claim(t, db, now)
	later := now.Add(10 * time.Hour).Truncate(time.Millisecond)
	if ok, err := db.Calls.UndoClaim(ctx, c1.ID, c1.ClaimToken, callstore.Undo{Status: callstore.CallScheduled, DueAt: later, At: now}); !ok || err != nil {
		t.Fatalf("defer: %v %v", ok, err)
	}
	c, _ := db.Calls.GetCall(ctx, org, c1.ID)
	if c.Status != callstore.CallScheduled || c.Attempts != 0 || !c.DueAt.Equal(later) || c.ScheduledAt == nil ||
		!c.ScheduledAt.Equal(later) || c.ClaimToken != "" {
		t.Fatalf("deferred: %+v", c)
	}
	c2, _ := claim(t, db, now)
	if ok, err := db.Calls.UndoClaim(ctx, c2.ID, c2.ClaimToken, callstore.Undo{Status: callstore.CallFailed, Reason: callstore.ReasonDoNotCall, At: now}); !ok || err != nil {
		t.Fatalf("fail: %v %v", ok, err)
	}
	c, _ = db.Calls.GetCall(ctx, org, c2.ID)
	atts, _ := db.Calls.CallAttempts(ctx, c2.ID)
	if c.Status != callstore.CallFailed || c.Attempts != 0 || c.FailureReason != callstore.ReasonDoNotCall || len(atts) != 0 {
		t.Fatalf("failed: %+v %v", c, atts)
	}
	_ = created
}

// An inbound call is found by its dialer's key and ended with its duration.
func TestInboundCall(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	got, err := db.Agents.VoiceAgentForNumber(ctx, "+15550001111")
	if err != nil || got.ID != a.ID {
		t.Fatalf("agent for number: %v %v", got.ID, err)
	}
	if _, err := db.Agents.VoiceAgentForNumber(ctx, "+15550009999"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown number: %v", err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	c, err := db.Calls.StartInboundCall(ctx, callstore.Call{OrgID: org, AgentID: a.ID, PhoneNumber: "+14155550100",
		CallerID: "+14155550100", Dialer: "sip", SIPParticipantID: "abc@host"}, at)
	if err != nil {
		t.Fatal(err)
	}
	id, done, err := db.Calls.EndInboundCall(ctx, callstore.InboundEnd{Dialer: "sip", SIPParticipantID: "abc@host", Status: callstore.CallCompleted,
		EndedAt: at.Add(2500 * time.Millisecond)})
	if err != nil || !done || id != c.ID {
		t.Fatalf("end: %v %v %v", id, done, err)
	}
	rec, _ := db.Calls.GetCall(ctx, org, c.ID)
	if rec.Direction != "inbound" || rec.Status != callstore.CallCompleted || rec.Duration == nil || *rec.Duration != 2.5 {
		t.Fatalf("inbound call: %+v", rec)
	}
	if _, done, _ := db.Calls.EndInboundCall(ctx, callstore.InboundEnd{Dialer: "sip", SIPParticipantID: "abc@host", Status: callstore.CallCompleted, EndedAt: at}); done {
		t.Fatal("ended twice")
	}
}

// A voicemail reported after the attempt settled is recorded and, with a
// retry time, sends the call back to scheduled.
func TestSettleVoicemail(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	now := time.Now().UTC()
	db.Calls.CreateCalls(ctx, queuedCalls(org, a.ID, 1, now))
	c, _ := claim(t, db, now)
	if _, err := db.Calls.FinishAttempt(ctx, c.ID, c.ClaimToken, callstore.Outcome{Status: callstore.CallCompleted, EndedAt: now}); err != nil {
		t.Fatal(err)
	}
	retry := now.Add(time.Hour)
	if ok, err := db.Calls.SettleVoicemail(ctx, c.ID, 1, &retry, now); !ok || err != nil {
		t.Fatalf("settle: %v %v", ok, err)
	}
	got, _ := db.Calls.GetCall(ctx, org, c.ID)
	atts, _ := db.Calls.CallAttempts(ctx, c.ID)
	if got.Status != callstore.CallScheduled || got.LastOutcome != callstore.OutcomeVoicemail || atts[0].Status != callstore.OutcomeVoicemail {
		t.Fatalf("voicemail: %s %s %+v", got.Status, got.LastOutcome, atts)
	}
	if ok, _ := db.Calls.SettleVoicemail(ctx, c.ID, 1, nil, now); ok {
		t.Fatal("settled a call that is no longer completed")
	}
}

// Settings round-trip; none saved reads as the zero value.
func TestOrgSettings(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	s, err := db.Calls.GetOrgSettings(ctx, org)
	if err != nil || s.CallingHours != nil {
		t.Fatalf("none: %+v %v", s, err)
	}
	if err := db.Calls.SaveOrgSettings(ctx, org, callstore.OrgSettings{CallingHours: json.RawMessage(`{"enabled":true}`)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	s, _ = db.Calls.GetOrgSettings(ctx, org)
	if string(s.CallingHours) != `{"enabled":true}` || s.UpdatedAt.IsZero() {
		t.Fatalf("saved: %+v", s)
	}
}

// seedDNC lists n numbers (+1 800 000 0000 upwards) for org.
func seedDNC(tb testing.TB, db *storage.Stores, org string, n int) {
	tb.Helper()
	ctx := context.Background()
	const chunk = 50000
	nums := make([]string, 0, chunk)
	for lo := 0; lo < n; lo += chunk {
		nums = nums[:0]
		for i := lo; i < min(lo+chunk, n); i++ {
			nums = append(nums, fmt.Sprintf("+1800%07d", i))
		}
		if _, _, err := db.Calls.AddDNC(ctx, org, nums, "bench", time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkDNCCheck: the do-not-call check of one call (the dial queue's
// and a schedule's) with 1,000,000 numbers listed, half the checks hits.
func BenchmarkDNCCheck(b *testing.B) {
	ctx := context.Background()
	db := storetest.Open(b, dbtest.Path(b, "dnc.db"))
	org, _ := db.Orgs.CreateOrg(ctx, "acme")
	const n = 1_000_000
	t0 := time.Now()
	seedDNC(b, db, org.ID, n)
	b.Logf("listed %d numbers in %s", n, time.Since(t0).Round(time.Millisecond))
	r := rand.New(rand.NewPCG(1, 2))
	hits := 0
	b.ResetTimer()
	for b.Loop() {
		num := fmt.Sprintf("+1800%07d", r.IntN(2*n))
		ok, err := db.Calls.DNCListed(ctx, org.ID, num)
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			hits++
		}
	}
	if b.N > 100 && (hits == 0 || hits == b.N) {
		b.Fatalf("%d hits of %d", hits, b.N)
	}
}
