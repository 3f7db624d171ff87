package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// campaignFixture is a database with one organization and a voice agent.
func campaignFixture(t *testing.T, config string) (*DB, string, Agent) {
	t.Helper()
	db, org := openAgentsTestDB(t)
	a, err := db.CreateAgent(context.Background(), Agent{OrgID: org, Name: "a", Type: "voice", Status: "active",
		Config: json.RawMessage(config), PhoneNumbers: []string{"+15550001111"}})
	if err != nil {
		t.Fatal(err)
	}
	return db, org, a
}

func queuedCalls(org, agent string, n int, due time.Time) []Call {
	out := make([]Call, n)
	for i := range out {
		out[i] = Call{OrgID: org, AgentID: agent, Status: CallQueued, PhoneNumber: fmt.Sprintf("+1415555%04d", i), DueAt: due}
	}
	return out
}

func claim(t *testing.T, db *DB, now time.Time) (Call, bool) {
	t.Helper()
	c, ok, err := db.ClaimNextCall(context.Background(), Claim{Token: fmt.Sprint(time.Now().UnixNano()), WorkerID: "w",
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
	b, created, err := db.CreateBatch(ctx, Batch{OrgID: org, AgentID: a.ID, Name: "spring"}, queuedCalls(org, a.ID, 3, now))
	if err != nil || len(created) != 3 || created[0].BatchID != b.ID {
		t.Fatalf("create: %v %+v", err, created)
	}
	live, ok := claim(t, db, now)
	if !ok {
		t.Fatal("nothing claimed")
	}
	if err := db.PauseBatch(ctx, org, b.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := claim(t, db, now); ok {
		t.Fatal("claimed a call of a paused batch")
	}
	if n, err := db.PromoteDueCalls(ctx, now.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("promoted %d calls of a paused batch (%v)", n, err)
	}
	if _, ok, _ := db.NextDue(ctx, CallScheduled); ok {
		t.Fatal("a paused batch's call counts as next due")
	}
	got, err := db.GetBatch(ctx, org, b.ID)
	if err != nil || got.Status != BatchPaused || got.Counts[CallScheduled] != 2 || got.Counts[CallConnecting] != 1 ||
		got.Total != 3 || got.Attempts != 1 || got.Name != "spring" || got.AgentName != "a" {
		t.Fatalf("paused batch: %v %+v", err, got)
	}
	if err := db.ResumeBatch(ctx, org, b.ID, now); err != nil {
		t.Fatal(err)
	}
	if n, err := db.PromoteDueCalls(ctx, now); err != nil || n != 2 {
		t.Fatalf("resume: promoted %d (%v)", n, err)
	}
	n, liveIDs, err := db.CancelBatch(ctx, org, b.ID, now)
	if err != nil || n != 3 || len(liveIDs) != 1 || liveIDs[0] != live.ID {
		t.Fatalf("cancel: %d %v %v", n, liveIDs, err)
	}
	if _, ok := claim(t, db, now); ok {
		t.Fatal("claimed a call of a cancelled batch")
	}
	if err := db.ResumeBatch(ctx, org, b.ID, now); !errors.Is(err, ErrBatchState) {
		t.Fatalf("resume a cancelled batch: %v", err)
	}
	bs, total, err := db.ListBatches(ctx, BatchFilter{OrgID: org, Status: BatchCancelled})
	if err != nil || total != 1 || len(bs) != 1 || bs[0].Counts[CallCancelled] != 3 {
		t.Fatalf("list cancelled: %v %d %+v", err, total, bs)
	}
	if _, total, _ := db.ListBatches(ctx, BatchFilter{OrgID: org, Status: BatchRunning}); total != 0 {
		t.Fatalf("%d running batches", total)
	}
	if _, err := db.GetBatch(ctx, "other-org", b.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another org's batch: %v", err)
	}
}

// An agent's maxConcurrentCalls caps its live calls at claim time; other
// agents' calls are still taken.
func TestClaimRespectsAgentConcurrency(t *testing.T) {
	ctx := context.Background()
	db, org, capped := campaignFixture(t, `{"maxConcurrentCalls":2}`)
	free, err := db.CreateAgent(ctx, Agent{OrgID: org, Name: "b", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := db.CreateCalls(ctx, queuedCalls(org, capped.ID, 5, now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCalls(ctx, queuedCalls(org, free.ID, 1, now)); err != nil {
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
	other, err := db.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateAgent(ctx, Agent{OrgID: other.ID, Name: "b", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	mine, _ := db.CreateCalls(ctx, queuedCalls(org, a.ID, 2, now.Add(time.Hour)))
	theirs, _ := db.CreateCalls(ctx, queuedCalls(other.ID, b.ID, 1, now.Add(time.Hour)))
	added, failed, err := db.AddDNC(ctx, org, []string{"+14155550000", "+14155559999"}, "asked", now)
	if err != nil || added != 2 || failed != 1 {
		t.Fatalf("add: %d %d %v", added, failed, err)
	}
	if again, _, _ := db.AddDNC(ctx, org, []string{"+14155550000"}, "", now); again != 0 {
		t.Fatalf("re-added %d", again)
	}
	c, _ := db.GetCall(ctx, org, mine[0].ID)
	if c.Status != CallFailed || c.FailureReason != ReasonDoNotCall {
		t.Fatalf("listed call: %s %q", c.Status, c.FailureReason)
	}
	if c, _ := db.GetCall(ctx, org, mine[1].ID); c.Status != CallQueued {
		t.Fatalf("unlisted call: %s", c.Status)
	}
	if c, _ := db.GetCall(ctx, other.ID, theirs[0].ID); c.Status != CallQueued {
		t.Fatalf("other org's call to the same number: %s", c.Status)
	}
	if ok, _ := db.DNCListed(ctx, other.ID, "+14155550000"); ok {
		t.Fatal("number listed in the other organization")
	}
	if ok, _ := db.DNCListed(ctx, org, "+14155550000"); !ok {
		t.Fatal("number not listed")
	}
	if page, total, _ := db.ListDNC(ctx, other.ID, "", 10, 0); total != 0 || len(page) != 0 {
		t.Fatalf("other org sees %d numbers", total)
	}
	page, total, err := db.ListDNC(ctx, org, "", 10, 0)
	if err != nil || total != 2 || page[0].PhoneNumber != "+14155550000" || page[0].Reason != "asked" {
		t.Fatalf("list: %v %d %+v", err, total, page)
	}
	if n, _ := db.RemoveDNC(ctx, other.ID, []string{"+14155550000"}); n != 0 {
		t.Fatal("the other organization removed our number")
	}
	if n, _ := db.RemoveDNC(ctx, org, []string{"+14155550000", "+19999999999"}); n != 1 {
		t.Fatalf("removed %d", n)
	}
	among, err := db.DNCListedAmong(ctx, org, []string{"+14155550000", "+14155559999"})
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
	created, _ := db.CreateCalls(ctx, queuedCalls(org, a.ID, 2, now))
	c1, _ := claim(t, db, now)
	later := now.Add(10 * time.Hour).Truncate(time.Millisecond)
	if ok, err := db.UndoClaim(ctx, c1.ID, c1.ClaimToken, Undo{Status: CallScheduled, DueAt: later, At: now}); !ok || err != nil {
		t.Fatalf("defer: %v %v", ok, err)
	}
	c, _ := db.GetCall(ctx, org, c1.ID)
	if c.Status != CallScheduled || c.Attempts != 0 || !c.DueAt.Equal(later) || c.ScheduledAt == nil ||
		!c.ScheduledAt.Equal(later) || c.ClaimToken != "" {
		t.Fatalf("deferred: %+v", c)
	}
	c2, _ := claim(t, db, now)
	if ok, err := db.UndoClaim(ctx, c2.ID, c2.ClaimToken, Undo{Status: CallFailed, Reason: ReasonDoNotCall, At: now}); !ok || err != nil {
		t.Fatalf("fail: %v %v", ok, err)
	}
	c, _ = db.GetCall(ctx, org, c2.ID)
	atts, _ := db.CallAttempts(ctx, c2.ID)
	if c.Status != CallFailed || c.Attempts != 0 || c.FailureReason != ReasonDoNotCall || len(atts) != 0 {
		t.Fatalf("failed: %+v %v", c, atts)
	}
	_ = created
}

// An inbound call is found by its dialer's key and ended with its duration.
func TestInboundCall(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	got, err := db.VoiceAgentForNumber(ctx, "+15550001111")
	if err != nil || got.ID != a.ID {
		t.Fatalf("agent for number: %v %v", got.ID, err)
	}
	if _, err := db.VoiceAgentForNumber(ctx, "+15550009999"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown number: %v", err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	c, err := db.StartInboundCall(ctx, Call{OrgID: org, AgentID: a.ID, PhoneNumber: "+14155550100",
		CallerID: "+14155550100", Dialer: "sip", SIPParticipantID: "abc@host"}, at)
	if err != nil {
		t.Fatal(err)
	}
	id, done, err := db.EndInboundCall(ctx, InboundEnd{Dialer: "sip", SIPParticipantID: "abc@host", Status: CallCompleted,
		EndedAt: at.Add(2500 * time.Millisecond)})
	if err != nil || !done || id != c.ID {
		t.Fatalf("end: %v %v %v", id, done, err)
	}
	rec, _ := db.GetCall(ctx, org, c.ID)
	if rec.Direction != "inbound" || rec.Status != CallCompleted || rec.Duration == nil || *rec.Duration != 2.5 {
		t.Fatalf("inbound call: %+v", rec)
	}
	if _, done, _ := db.EndInboundCall(ctx, InboundEnd{Dialer: "sip", SIPParticipantID: "abc@host", Status: CallCompleted, EndedAt: at}); done {
		t.Fatal("ended twice")
	}
}

// A voicemail reported after the attempt settled is recorded and, with a
// retry time, sends the call back to scheduled.
func TestSettleVoicemail(t *testing.T) {
	ctx := context.Background()
	db, org, a := campaignFixture(t, "{}")
	now := time.Now().UTC()
	db.CreateCalls(ctx, queuedCalls(org, a.ID, 1, now))
	c, _ := claim(t, db, now)
	if _, err := db.FinishAttempt(ctx, c.ID, c.ClaimToken, Outcome{Status: CallCompleted, EndedAt: now}); err != nil {
		t.Fatal(err)
	}
	retry := now.Add(time.Hour)
	if ok, err := db.SettleVoicemail(ctx, c.ID, 1, &retry, now); !ok || err != nil {
		t.Fatalf("settle: %v %v", ok, err)
	}
	got, _ := db.GetCall(ctx, org, c.ID)
	atts, _ := db.CallAttempts(ctx, c.ID)
	if got.Status != CallScheduled || got.LastOutcome != OutcomeVoicemail || atts[0].Status != OutcomeVoicemail {
		t.Fatalf("voicemail: %s %s %+v", got.Status, got.LastOutcome, atts)
	}
	if ok, _ := db.SettleVoicemail(ctx, c.ID, 1, nil, now); ok {
		t.Fatal("settled a call that is no longer completed")
	}
}

// Settings round-trip; none saved reads as the zero value.
func TestOrgSettings(t *testing.T) {
	ctx := context.Background()
	db, org := openAgentsTestDB(t)
	s, err := db.GetOrgSettings(ctx, org)
	if err != nil || s.CallingHours != nil {
		t.Fatalf("none: %+v %v", s, err)
	}
	if err := db.SaveOrgSettings(ctx, org, OrgSettings{CallingHours: json.RawMessage(`{"enabled":true}`)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	s, _ = db.GetOrgSettings(ctx, org)
	if string(s.CallingHours) != `{"enabled":true}` || s.UpdatedAt.IsZero() {
		t.Fatalf("saved: %+v", s)
	}
}
