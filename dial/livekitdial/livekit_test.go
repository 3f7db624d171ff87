package livekitdial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/livekittest"
)

var lkTestCall = dial.Call{
	ID: "5f0c1f7e-3b1a-4c2e-9d7a-2b8f6c1e0a11", Attempt: 1, OrgID: "org-1",
	AgentID: "agent-1", AgentName: "Ava", Instructions: "Be brief.\nSay \"hi\" <first>.",
	PhoneNumber: "+15551234567", CallerID: "+15557654321",
	Metadata: map[string]any{"customer": "Acme", "tier": 2},
}

var (
	lkTestRoom     = "call-" + lkTestCall.ID + "-1"
	lkTestIdentity = "sip-" + lkTestRoom
)

func newTestLiveKit(t *testing.T, f *livekittest.Server, poll time.Duration) *LiveKit {
	t.Helper()
	l, err := NewLiveKit(LiveKitConfig{
		URL: f.URL, APIKey: livekittest.Key, APISecret: livekittest.Secret,
		OutboundTrunkID: "ST_test", AgentName: "voice-agent",
		RingTimeout: 30 * time.Second, PollInterval: poll, HTTPTimeout: 5 * time.Second,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// dialRun runs Dial in the background and collects its progress.
type dialRun struct {
	prog chan dial.Progress
	done chan struct{}
	res  dial.Result
	err  error
}

func startDial(ctx context.Context, l dial.Dialer, c dial.Call) *dialRun {
	d := &dialRun{prog: make(chan dial.Progress, 16), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.res, d.err = l.Dial(ctx, c, func(p dial.Progress) { d.prog <- p })
	}()
	return d
}

// waitStatus reads progress until status arrives and returns it.
func (d *dialRun) waitStatus(t *testing.T, status string) dial.Progress {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-d.prog:
			if p.Status == status {
				return p
			}
		case <-d.done:
			t.Fatalf("Dial returned %+v, %v before %s", d.res, d.err, status)
		case <-timeout:
			t.Fatalf("no %s progress", status)
		}
	}
}

func (d *dialRun) wait(t *testing.T) (dial.Result, error) {
	t.Helper()
	select {
	case <-d.done:
		return d.res, d.err
	case <-time.After(10 * time.Second):
		t.Fatal("Dial did not return")
	}
	return dial.Result{}, nil
}

// ended reports whether the dial ends within d: a call that must go on is
// watched that long (it fails as soon as the call ends).
func ended(r *dialRun, d time.Duration) bool {
	select {
	case <-r.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (d *dialRun) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// statuses drains the progress reported so far.
func (d *dialRun) statuses() []string {
	var out []string
	for {
		select {
		case p := <-d.prog:
			out = append(out, p.Status)
		default:
			return out
		}
	}
}

func checkGolden(t *testing.T, got []byte, name string) {
	t.Helper()
	want, err := os.ReadFile("../../testdata/livekit/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("%s body:\n got %s\nwant %s", name, got, buf.Bytes())
	}
}

func TestLiveKitAnsweredThenWebhookCompletes(t *testing.T) {
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1) // webhook only
	d := startDial(context.Background(), l, lkTestCall)

	var seen []dial.Progress
	for _, st := range []string{dial.StatusConnecting, dial.StatusRinging, dial.StatusActive} {
		seen = append(seen, d.waitStatus(t, st))
	}
	if seen[0].RoomID != lkTestRoom || seen[0].JobID != "" {
		t.Errorf("connecting %+v", seen[0])
	}
	if seen[1].RoomID != lkTestRoom || seen[1].JobID != "AD_"+lkTestRoom || seen[1].SIPParticipantID != "" {
		t.Errorf("ringing %+v", seen[1])
	}
	if seen[2].SIPParticipantID != "PA_"+lkTestIdentity || seen[2].JobID != "AD_"+lkTestRoom {
		t.Errorf("active %+v", seen[2])
	}
	checkGolden(t, f.Body("RoomService/CreateRoom"), "create_room.json")
	checkGolden(t, f.Body("AgentDispatchService/CreateDispatch"), "create_dispatch.json")
	checkGolden(t, f.Body("SIP/CreateSIPParticipant"), "create_sip_participant.json")

	// The agent leaving does not end the call; the callee leaving does.
	time.Sleep(60 * time.Millisecond) // the call's talk time, which its duration must show: the test's input, not a wait
	body := livekittest.WebhookBody("EV_agent", "participant_left", lkTestRoom, "agent-AJ_1", time.Now())
	ev, err := l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(5*time.Minute)), body)
	if err != nil || ev.EndsCall || !ev.Delivered {
		t.Fatalf("agent left: %+v %v", ev, err)
	}
	body = livekittest.WebhookBody("EV_1", "participant_left", lkTestRoom, lkTestIdentity, time.Now())
	ev, err = l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(5*time.Minute)), body)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.EndsCall || !ev.Delivered || ev.CallID != lkTestCall.ID || ev.Attempt != 1 ||
		ev.RoomName != lkTestRoom || ev.ParticipantIdentity != lkTestIdentity || ev.CreatedAt.IsZero() {
		t.Errorf("event %+v", ev)
	}
	res, err := d.wait(t)
	if err != nil || res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	if res.Duration < 60*time.Millisecond || res.Duration > 5*time.Second {
		t.Errorf("duration %v", res.Duration)
	}
	want := []string{"RoomService/CreateRoom", "AgentDispatchService/CreateDispatch", "SIP/CreateSIPParticipant", "RoomService/DeleteRoom"}
	if got := f.Methods(); !slices.Equal(got, want) {
		t.Errorf("methods %v, want %v", got, want)
	}
}

func TestLiveKitRoomFinishedWebhookCompletes(t *testing.T) {
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	d := startDial(context.Background(), l, lkTestCall)
	d.waitStatus(t, dial.StatusActive)
	body := livekittest.WebhookBody("EV_rf", "room_finished", lkTestRoom, "", time.Now())
	if _, err := l.HandleWebhook(context.Background(), "Bearer "+livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(time.Minute)), body); err != nil {
		t.Fatal(err)
	}
	res, err := d.wait(t)
	if err != nil || res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	if f.Called("RoomService/DeleteRoom") {
		t.Error("DeleteRoom called for a finished room")
	}
}

func TestLiveKitSIPOutcomes(t *testing.T) {
	sipErr := func(status int, code, msg string, meta map[string]string) func(*http.Request, map[string]any) (int, string) {
		return func(*http.Request, map[string]any) (int, string) {
			return livekittest.TwirpError(status, code, msg, meta)
		}
	}
	meta := func(code, status string) map[string]string {
		return map[string]string{"sip_status_code": code, "sip_status": status}
	}
	cases := []struct {
		name       string
		sip        func(*http.Request, map[string]any) (int, string)
		status     string
		code       int
		reason     string // substring
		retryLater bool
	}{
		{"486 busy", sipErr(400, "invalid_argument", "sip status 486: Busy Here", meta("486", "Busy Here")), dial.StatusBusy, 486, "", false},
		{"480 no answer", sipErr(400, "invalid_argument", "sip status 480: Temporarily Unavailable", meta("480", "Temporarily Unavailable")), dial.StatusNoAnswer, 480, "", false},
		{"408 no answer", sipErr(400, "invalid_argument", "sip status 408: Request Timeout", meta("408", "Request Timeout")), dial.StatusNoAnswer, 408, "", false},
		{"487 no answer", sipErr(400, "invalid_argument", "sip status 487: Request Terminated", meta("487", "Request Terminated")), dial.StatusNoAnswer, 487, "", false},
		{"404 failed", sipErr(400, "invalid_argument", "sip status 404: Not Found", meta("404", "Not Found")), dial.StatusFailed, 404, "SIP 404 Not Found", false},
		{"404 enum phrase", sipErr(400, "invalid_argument", "sip status 404: SIP_STATUS_NOTFOUND", meta("404", "SIP_STATUS_NOTFOUND")), dial.StatusFailed, 404, "SIP 404 Not Found", false},
		{"603 from message only", sipErr(400, "invalid_argument", "sip status 603: Decline", nil), dial.StatusFailed, 603, "SIP 603 Decline", false},
		{"503 from trunk", sipErr(412, "failed_precondition", "sip status 503: Service Unavailable", meta("503", "Service Unavailable")), dial.StatusFailed, 503, "SIP 503 Service Unavailable", false},
		{"no SIP worker", sipErr(503, "unavailable", "no response from servers", nil), dial.StatusFailed, 0, "no SIP service answered", false},
		{"unknown trunk", sipErr(404, "not_found", "requested sip trunk does not exist", nil), dial.StatusFailed, 0, "check the outbound trunk id", false},
		{"limit resource_exhausted", sipErr(429, "resource_exhausted", "concurrent call limit exceeded", nil), "", 0, "", true},
		{"cps limit message", sipErr(412, "failed_precondition", "outbound CPS limit exceeded for project", nil), "", 0, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := livekittest.New(t)
			f.SIP = tc.sip
			l := newTestLiveKit(t, f, -1)
			res, err := l.Dial(context.Background(), lkTestCall, nil)
			if tc.retryLater {
				if !errors.Is(err, dial.ErrRetryLater) {
					t.Fatalf("want ErrRetryLater, got %+v %v", res, err)
				}
			} else {
				if err != nil || res.Status != tc.status || res.SIPCode != tc.code || !strings.Contains(res.Reason, tc.reason) {
					t.Fatalf("got %+v %v, want %s %d %q", res, err, tc.status, tc.code, tc.reason)
				}
				if tc.status == dial.StatusFailed && tc.code != 0 && res.Reason != tc.reason {
					t.Errorf("reason %q, want %q", res.Reason, tc.reason)
				}
			}
			if !f.Called("RoomService/DeleteRoom") {
				t.Error("room not deleted")
			}
		})
	}
}

func TestLiveKitCancelWhileRinging(t *testing.T) {
	f := livekittest.New(t)
	ringing := make(chan struct{})
	f.SIP = func(r *http.Request, _ map[string]any) (int, string) {
		close(ringing)
		<-r.Context().Done() // the phone rings until the client gives up
		return 0, ""
	}
	l := newTestLiveKit(t, f, -1)
	ctx, cancel := context.WithCancel(context.Background())
	d := startDial(ctx, l, lkTestCall)
	d.waitStatus(t, dial.StatusRinging)
	<-ringing
	cancel()
	res, err := d.wait(t)
	if err != nil || res.Status != dial.StatusCancelled {
		t.Fatalf("result %+v %v", res, err)
	}
	if !f.Called("RoomService/DeleteRoom") {
		t.Error("DeleteRoom not called")
	}
	if slices.Contains(d.statuses(), dial.StatusActive) {
		t.Error("reported active")
	}
}

func TestLiveKitCancelWhileActive(t *testing.T) {
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	ctx, cancel := context.WithCancel(context.Background())
	d := startDial(ctx, l, lkTestCall)
	d.waitStatus(t, dial.StatusActive)
	cancel()
	res, err := d.wait(t)
	if err != nil || res.Status != dial.StatusCancelled {
		t.Fatalf("result %+v %v", res, err)
	}
	m := f.Methods()
	if !slices.Equal(m[len(m)-2:], []string{"RoomService/RemoveParticipant", "RoomService/DeleteRoom"}) {
		t.Errorf("methods %v", m)
	}
	if string(f.Body("RoomService/RemoveParticipant")) != `{"room":"`+lkTestRoom+`","identity":"`+lkTestIdentity+`"}` {
		t.Errorf("RemoveParticipant body %s", f.Body("RoomService/RemoveParticipant"))
	}
	if string(f.Body("RoomService/DeleteRoom")) != `{"room":"`+lkTestRoom+`"}` {
		t.Errorf("DeleteRoom body %s", f.Body("RoomService/DeleteRoom"))
	}
}

func TestLiveKitWebhookRefusals(t *testing.T) {
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	d := startDial(context.Background(), l, lkTestCall)
	d.waitStatus(t, dial.StatusActive)

	now := time.Now()
	body := livekittest.WebhookBody("EV_end", "participant_left", lkTestRoom, lkTestIdentity, time.Now())
	other := livekittest.WebhookBody("EV_other", "room_started", "call-x-1", "", time.Now())
	good := livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, now, now.Add(5*time.Minute))
	parts := strings.Split(good, ".")
	refusals := []struct{ name, auth string }{
		{"no header", ""},
		{"forged secret", livekittest.SignWebhook(livekittest.Key, "not-the-secret", body, now, now.Add(5*time.Minute))},
		{"other key", livekittest.SignWebhook("APIother", livekittest.Secret, body, now, now.Add(5*time.Minute))},
		{"body hash of another body", livekittest.SignWebhook(livekittest.Key, livekittest.Secret, other, now, now.Add(5*time.Minute))},
		{"expired", livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, now.Add(-20*time.Minute), now.Add(-10*time.Minute))},
		{"not yet valid", livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, now.Add(10*time.Minute), now.Add(20*time.Minute))},
		{"alg none", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."},
		{"signature cut", parts[0] + "." + parts[1] + "." + parts[2][:10]},
		{"garbage", "Bearer x.y"},
	}
	for _, r := range refusals {
		ev, err := l.HandleWebhook(context.Background(), r.auth, body)
		if !errors.Is(err, ErrWebhookInvalid) || ev.Delivered {
			t.Errorf("%s: got %+v %v, want ErrWebhookInvalid", r.name, ev, err)
		}
	}
	// A valid token over a tampered body is refused too.
	tampered := bytes.Replace(body, []byte("participant_left"), []byte("room_finished"), 1)
	if _, err := l.HandleWebhook(context.Background(), good, tampered); !errors.Is(err, ErrWebhookInvalid) {
		t.Errorf("tampered body: %v", err)
	}
	if ended(d, 50*time.Millisecond) {
		t.Fatal("a refused webhook ended the call")
	}
	// Refusals did not poison the replay memory: the genuine event is taken.
	if _, err := l.HandleWebhook(context.Background(), good, body); err != nil {
		t.Fatalf("genuine webhook: %v", err)
	}
	if res, err := d.wait(t); err != nil || res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	// Replays of it (same token, or a fresh token over the same event) are refused.
	if _, err := l.HandleWebhook(context.Background(), good, body); !errors.Is(err, ErrWebhookReplay) {
		t.Errorf("replay: %v", err)
	}
	fresh := livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, now.Add(time.Second), now.Add(6*time.Minute))
	if _, err := l.HandleWebhook(context.Background(), fresh, body); !errors.Is(err, ErrWebhookReplay) {
		t.Errorf("replay with new token: %v", err)
	}
}

func TestLiveKitWebhookReplayIsNoOpForNextAttempt(t *testing.T) {
	// A replayed "callee left" of attempt 1 must not end attempt 2 even if
	// it reached the process: different room, different identity.
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	c := lkTestCall
	c.Attempt = 2
	d := startDial(context.Background(), l, c)
	d.waitStatus(t, dial.StatusActive)
	body := livekittest.WebhookBody("EV_old", "participant_left", lkTestRoom, lkTestIdentity, time.Now())
	ev, err := l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(time.Minute)), body)
	if err != nil || ev.Delivered || ev.Attempt != 1 {
		t.Fatalf("%+v %v", ev, err)
	}
	if ended(d, 30*time.Millisecond) {
		t.Fatal("attempt 2 ended by attempt 1's event")
	}
	room2 := LiveKitRoomName(c.ID, 2)
	body = livekittest.WebhookBody("EV_new", "room_finished", room2, "", time.Now())
	if _, err := l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(time.Minute)), body); err != nil {
		t.Fatal(err)
	}
	if res, _ := d.wait(t); res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
}

func TestLiveKitPollingFallback(t *testing.T) {
	for _, how := range []string{"callee left", "room gone"} {
		t.Run(how, func(t *testing.T) {
			f := livekittest.New(t)
			l := newTestLiveKit(t, f, 20*time.Millisecond)
			d := startDial(context.Background(), l, lkTestCall)
			d.waitStatus(t, dial.StatusActive)
			if ended(d, 80*time.Millisecond) { // a few polls that find the callee
				t.Fatal("call ended while the callee was in the room")
			}
			if how == "callee left" {
				f.HangUpCallee(lkTestRoom, lkTestIdentity)
			} else {
				f.DropRoom(lkTestRoom)
			}
			res, err := d.wait(t)
			if err != nil || res.Status != dial.StatusCompleted || res.Duration < 80*time.Millisecond {
				t.Fatalf("result %+v %v", res, err)
			}
			if !f.Called("RoomService/ListRooms") {
				t.Error("ListRooms not called")
			}
			if how == "callee left" && !f.Called("RoomService/ListParticipants") {
				t.Error("ListParticipants not called")
			}
		})
	}
}

func TestLiveKitUnreachableRetriesLater(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	l, err := NewLiveKit(LiveKitConfig{URL: "ws://" + addr, APIKey: "k", APISecret: "s", OutboundTrunkID: "ST_x", AgentName: "a", HTTPTimeout: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	_, err = l.Dial(context.Background(), lkTestCall, func(dial.Progress) { reported = true })
	if !errors.Is(err, dial.ErrRetryLater) || reported {
		t.Fatalf("err %v reported %v", err, reported)
	}
}

func TestLiveKitProxyDownRetriesLater(t *testing.T) {
	srv := livekittest.New(t)
	srv.HTTP.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>502 Bad Gateway</html>", http.StatusBadGateway)
	})
	l := newTestLiveKit(t, srv, -1)
	if _, err := l.Dial(context.Background(), lkTestCall, nil); !errors.Is(err, dial.ErrRetryLater) {
		t.Fatalf("err %v", err)
	}
}

func TestLiveKitCheckTrunk(t *testing.T) {
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	if err := l.CheckTrunk(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := string(f.Body("SIP/ListSIPOutboundTrunk")); got != `{"trunk_ids":["ST_test"]}` {
		t.Errorf("body %s", got)
	}
	l.cfg.OutboundTrunkID = "ST_missing"
	if err := l.CheckTrunk(context.Background()); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing trunk: %v", err)
	}
}

func TestLiveKitConfig(t *testing.T) {
	ok := LiveKitConfig{URL: "wss://lk.example.com/", APIKey: "k", APISecret: "s", OutboundTrunkID: "ST_1", AgentName: "a"}
	l, err := NewLiveKit(ok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.client.base != "https://lk.example.com" || l.cfg.RingTimeout != 30*time.Second ||
		l.cfg.PollInterval != 5*time.Second || l.Name() != "livekit" {
		t.Errorf("base %q cfg %+v", l.client.base, l.cfg)
	}
	for _, bad := range []func(*LiveKitConfig){
		func(c *LiveKitConfig) { c.URL = "" },
		func(c *LiveKitConfig) { c.URL = "ftp://x" },
		func(c *LiveKitConfig) { c.URL = "lk.example.com" },
		func(c *LiveKitConfig) { c.APISecret = "" },
		func(c *LiveKitConfig) { c.OutboundTrunkID = "" },
		func(c *LiveKitConfig) { c.AgentName = "" },
	} {
		c := ok
		bad(&c)
		if _, err := NewLiveKit(c, nil); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestLiveKitRoomName(t *testing.T) {
	room := LiveKitRoomName("5f0c1f7e-3b1a-4c2e-9d7a-2b8f6c1e0a11", 12)
	id, n, ok := ParseLiveKitRoomName(room)
	if !ok || id != "5f0c1f7e-3b1a-4c2e-9d7a-2b8f6c1e0a11" || n != 12 {
		t.Errorf("%s -> %q %d %v", room, id, n, ok)
	}
	for _, bad := range []string{"", "call-", "call-x", "call--1", "room-x-1", "call-x-0", "call-x-01", "call-x-+1", "call-x-1a"} {
		if _, _, ok := ParseLiveKitRoomName(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestLiveKitStaleRoomEventIgnored(t *testing.T) {
	// The same attempt dialled again after ErrRetryLater reuses the room
	// name; the late room_finished of the earlier room must not end it.
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	d := startDial(context.Background(), l, lkTestCall)
	d.waitStatus(t, dial.StatusActive)
	stale := bytes.Replace(livekittest.WebhookBody("EV_stale", "room_finished", lkTestRoom, "", time.Now()), []byte(`"RM_`), []byte(`"RM_old_`), 1)
	ev, err := l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, stale, time.Now(), time.Now().Add(time.Minute)), stale)
	if err != nil || !ev.Delivered || ev.RoomSID != "RM_old_"+lkTestRoom {
		t.Fatalf("%+v %v", ev, err)
	}
	if ended(d, 30*time.Millisecond) {
		t.Fatal("stale room_finished ended the call")
	}
	body := livekittest.WebhookBody("EV_now", "room_finished", lkTestRoom, "", time.Now())
	if _, err := l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(time.Minute)), body); err != nil {
		t.Fatal(err)
	}
	if res, _ := d.wait(t); res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
}
