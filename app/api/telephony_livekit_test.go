package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/livekittest"
)

// liveKitDialer runs the server with --dialer livekit against the fake.
// Polling is off so that only webhooks end calls; a 1 s lease makes the
// queue's heartbeat (which notices a call ended elsewhere) run every 200 ms.
func liveKitDialer(url, trunk string) func(*serveConfig) {
	return func(c *serveConfig) {
		c.Calls = calls.Config{Dialer: "livekit", DialCPS: 50, MaxConcurrent: 10,
			Poll: 100 * time.Millisecond, Lease: time.Second, Drain: time.Second,
			Telephony: calls.TelephonyConfig{LiveKit: livekitdial.LiveKitConfig{URL: url, APIKey: livekittest.Key, APISecret: livekittest.Secret,
				OutboundTrunkID: trunk, AgentName: "telephony-test-agent", RingTimeout: 5 * time.Second, PollInterval: -1}}}
	}
}

// telSign signs a webhook body as livekit-server does, valid until exp.
func telSign(key, secret string, body []byte, exp time.Time) string {
	return livekittest.SignWebhook(key, secret, body, time.Now().Add(-time.Minute), exp)
}

// postWebhook sends a webhook with the given Authorization header ("" for none).
func (e *testEnv) postWebhook(auth string, body []byte) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/api/v1/telephony/livekit/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/webhook+json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// activeLiveKitCall places a call through the fake and waits until it is
// active; it returns the call id and its room.
func activeLiveKitCall(t *testing.T, e *testEnv) (string, string) {
	t.Helper()
	agent := e.voiceAgent(e.orgID)
	id := e.outbound(e.key, agent.ID, "+14155550123")
	c := e.waitCall(e.key, id, 10*time.Second, func(c callView) bool { return c.Status == "active" })
	room := livekitdial.LiveKitRoomName(id, 1)
	if c.RoomID == nil || *c.RoomID != room || c.JobID == nil || *c.JobID != "AD_"+room ||
		c.SIPParticipantID == nil || *c.SIPParticipantID != "PA_sip-"+room {
		t.Fatalf("active call ids: room %v job %v participant %v", c.RoomID, c.JobID, c.SIPParticipantID)
	}
	return id, room
}

// forgedWebhooks are refused with 401 and leave the call active.
func forgedWebhooks(t *testing.T, e *testEnv, id string, body []byte) {
	t.Helper()
	exp := time.Now().Add(5 * time.Minute)
	other := append(append([]byte(nil), body...), ' ') // a body that differs by one byte
	cases := map[string]string{
		"no token":       "",
		"wrong secret":   telSign(livekittest.Key, "not-the-secret-0123456789abcdefghij", body, exp),
		"other key":      telSign("APIsomeoneelse", livekittest.Secret, body, exp),
		"other body":     telSign(livekittest.Key, livekittest.Secret, other, exp),
		"expired":        telSign(livekittest.Key, livekittest.Secret, body, time.Now().Add(-5*time.Minute)),
		"not a token":    "Bearer abc.def",
		"garbage header": "Basic dXNlcjpwYXNz",
	}
	for name, auth := range cases {
		code, resp := e.postWebhook(auth, body)
		var shape struct {
			Error struct {
				Message string `json:"message"`
				Status  int    `json:"status"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(resp), &shape)
		if code != http.StatusUnauthorized || shape.Error.Status != 401 || shape.Error.Message == "" {
			t.Errorf("%s: %d %s, want 401 in the v2 error shape", name, code, resp)
		}
	}
	if c := e.getCall(e.key, id); c.Status != "active" {
		t.Fatalf("after forged webhooks the call is %s", c.Status)
	}
}

// A correctly signed webhook ends the call its process is dialling; forged
// ones are refused and a replay is refused and changes nothing. A result
// posted by the voice agent during the call is still shown after it ended.
func TestTelephonyLiveKitWebhookEndsCall(t *testing.T) {
	fake := livekittest.New(t)
	e := newTestEnv(t, liveKitDialer(fake.URL, livekittest.TrunkID))
	waitLog(t, e, "livekit: outbound trunk found")
	id, room := activeLiveKitCall(t, e)

	if code, _, b := e.do("POST", "/api/v1/calls/"+id+"/result", e.key, map[string]any{
		"summary": "Booked for Tuesday", "outcome": "appointment_booked",
		"transcript": []map[string]any{{"role": "agent", "text": "Hello!", "at": "2026-06-10T14:00:05+02:00"}},
	}); code != 200 {
		t.Fatalf("result during the call: %d %s", code, b)
	}

	body := livekittest.WebhookBody("EV_left_1", "participant_left", room, "sip-"+room, time.Now())
	forgedWebhooks(t, e, id, body)

	auth := telSign(livekittest.Key, livekittest.Secret, body, time.Now().Add(5*time.Minute))
	if code, resp := e.postWebhook("Bearer "+auth, body); code != 200 || strings.TrimSpace(resp) != `{"received":true}` {
		t.Fatalf("signed webhook: %d %s", code, resp)
	}
	c := e.waitFinal(e.key, id, 5*time.Second)
	if c.Status != "completed" || c.Duration == nil || *c.Duration <= 0 {
		t.Fatalf("after the webhook: %s duration %v", c.Status, c.Duration)
	}
	if !fake.CalledFor("RoomService/DeleteRoom", room) {
		t.Error("the room was not deleted after the callee left")
	}
	var before struct{ Data map[string]any }
	e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &before)

	if code, resp := e.postWebhook(auth, body); code != http.StatusConflict {
		t.Fatalf("replayed webhook: %d %s, want 409", code, resp)
	}
	var after struct{ Data map[string]any }
	e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &after)
	if before.Data["updatedAt"] != after.Data["updatedAt"] || before.Data["duration"] != after.Data["duration"] {
		t.Errorf("replay changed the call: %v -> %v", before.Data, after.Data)
	}
	if after.Data["summary"] != "Booked for Tuesday" || after.Data["outcome"] != "appointment_booked" {
		t.Errorf("result after the end of the call: summary %v outcome %v", after.Data["summary"], after.Data["outcome"])
	}
	tr, _ := after.Data["transcript"].([]any)
	if len(tr) != 1 || tr[0].(map[string]any)["at"] != "2026-06-10T12:00:05.000Z" {
		t.Errorf("transcript %v", after.Data["transcript"])
	}

	big := bytes.Repeat([]byte("x"), 1<<20+1)
	if code, _ := e.postWebhook(auth, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB webhook: %d, want 413", code)
	}
}

// A webhook reaching a process that is not dialling the call (two agentd on
// one database) completes it in the database, with the duration from the
// answer to the event's time, only while it is still active on that
// attempt in that room. The dialling process then sees its claim gone and
// hangs up; nothing else changes.
func TestTelephonyLiveKitWebhookOtherProcess(t *testing.T) {
	fake := livekittest.New(t)
	dbPath := dbtest.Path(t, "agentd.db")
	a := startTestEnv(t, dbPath, liveKitDialer(fake.URL, livekittest.TrunkID))
	id, room := activeLiveKitCall(t, a)
	b := startTestEnv(t, dbPath, liveKitDialer(fake.URL, livekittest.TrunkID))
	b.key = a.key

	var rec struct {
		Data struct {
			AnsweredAt string `json:"answeredAt"`
		}
	}
	a.doJSON("GET", "/api/v1/calls/"+id, a.key, nil, &rec)
	answered, err := time.Parse(time.RFC3339Nano, rec.Data.AnsweredAt)
	if err != nil {
		t.Fatal(err)
	}
	ended := answered.Truncate(time.Second).Add(3 * time.Second) // LiveKit's createdAt has whole seconds
	body := livekittest.WebhookBody("EV_finished_1", "room_finished", room, "", ended)
	forgedWebhooks(t, b, id, body)

	// An event of another attempt's room, and one of a room agentd did not
	// create, change nothing.
	for _, r := range []string{livekitdial.LiveKitRoomName(id, 2), "someone-elses-room"} {
		ob := livekittest.WebhookBody("EV_other_"+r, "room_finished", r, "", ended)
		if code, resp := b.postWebhook(telSign(livekittest.Key, livekittest.Secret, ob, time.Now().Add(time.Minute)), ob); code != 200 {
			t.Fatalf("webhook for %s: %d %s", r, code, resp)
		}
	}
	if c := b.getCall(a.key, id); c.Status != "active" {
		t.Fatalf("a webhook of another room ended the call: %s", c.Status)
	}

	if code, resp := b.postWebhook(telSign(livekittest.Key, livekittest.Secret, body, time.Now().Add(time.Minute)), body); code != 200 {
		t.Fatalf("signed webhook: %d %s", code, resp)
	}
	c := b.getCall(a.key, id) // written before the answer: no waiting
	want := ended.Sub(answered).Seconds()
	if c.Status != "completed" || c.Duration == nil || fmt.Sprintf("%.3f", *c.Duration) != fmt.Sprintf("%.3f", want) {
		t.Fatalf("after the webhook: %s duration %v, want completed %.3f", c.Status, c.Duration, want)
	}
	var full struct{ Data map[string]any }
	b.doJSON("GET", "/api/v1/calls/"+id, a.key, nil, &full)
	if full.Data["endedAt"] != formatTime(ended) {
		t.Errorf("endedAt %v, want %s", full.Data["endedAt"], formatTime(ended))
	}

	// Process a notices within a heartbeat and hangs up the room.
	testkit.Eventually(t, 5*time.Second, func() bool { return fake.CalledFor("RoomService/DeleteRoom", room) },
		"the dialling process did not hang up after the call was completed elsewhere")
	// The dialer's Dial returns after the hang-up with no event of its own
	// to wait on (the fake LiveKit sees nothing more); give it time to settle.
	time.Sleep(300 * time.Millisecond)
	// A later end event (another id) for the finished call is received and
	// changes nothing.
	late := livekittest.WebhookBody("EV_left_2", "participant_left", room, "sip-"+room, ended.Add(10*time.Second))
	if code, _ := b.postWebhook(telSign(livekittest.Key, livekittest.Secret, late, time.Now().Add(time.Minute)), late); code != 200 {
		t.Fatalf("late webhook: %d", code)
	}
	var final struct{ Data map[string]any }
	a.doJSON("GET", "/api/v1/calls/"+id, a.key, nil, &final)
	if final.Data["status"] != "completed" || final.Data["duration"] != full.Data["duration"] ||
		final.Data["endedAt"] != full.Data["endedAt"] {
		t.Errorf("the call changed after it was completed: %v -> %v", full.Data, final.Data)
	}
	hist, _ := final.Data["attemptHistory"].([]any)
	if len(hist) != 1 || hist[0].(map[string]any)["status"] != "completed" {
		t.Errorf("attempt history %v", hist)
	}
}

// A wrong trunk id is logged at start and does not stop the server.
func TestTelephonyLiveKitTrunkCheck(t *testing.T) {
	fake := livekittest.New(t)
	e := newTestEnv(t, liveKitDialer(fake.URL, "ST_missing"))
	waitLog(t, e, "livekit: outbound trunk check failed")
	if code, _, _ := e.do("GET", "/healthz", "", nil); code != 200 {
		t.Errorf("healthz %d", code)
	}
}

// waitLog waits until the server log contains s.
func waitLog(t *testing.T, e *testEnv, s string) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, func() bool { return strings.Contains(e.logs.String(), s) }, "log never said %q", s)
}
