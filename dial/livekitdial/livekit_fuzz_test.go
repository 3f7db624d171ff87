package livekitdial

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/livekittest"
)

// Webhook samples: room_started/room_finished are bodies livekit-server
// v1.13.5 sent; participant_left follows the same protojson shape.
func lkWebhookSamples(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../../testdata/livekit/webhook_*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no webhook samples: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

func TestLiveKitWebhookSamples(t *testing.T) {
	s := lkWebhookSamples(t)
	want := map[string]WebhookEvent{
		"webhook_room_started.json":  {ID: "EV_PDKzwePiGpYw", Event: "room_started", RoomSID: "RM_kBFWLTfKY8zh", CreatedAt: time.Unix(1795320838, 0).UTC()},
		"webhook_room_finished.json": {ID: "EV_AhVRjSi9aRBs", Event: "room_finished", RoomSID: "RM_kBFWLTfKY8zh", CreatedAt: time.Unix(1795320838, 0).UTC(), EndsCall: true},
		"webhook_participant_left.json": {ID: "EV_Yt4mZp9LrX2q", Event: "participant_left", RoomSID: "RM_kBFWLTfKY8zh",
			ParticipantIdentity: lkTestIdentity, ParticipantSID: "PA_Q8nVZf2kcdx3", CreatedAt: time.Unix(1795320901, 0).UTC(), EndsCall: true},
	}
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	for name, w := range want {
		w.RoomName, w.CallID, w.Attempt = lkTestRoom, lkTestCall.ID, 1
		body := s[name]
		got, err := l.HandleWebhook(context.Background(), livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(5*time.Minute)), body)
		if err != nil || got != w {
			t.Errorf("%s:\n got %+v %v\nwant %+v", name, got, err, w)
		}
	}
}

func FuzzLiveKitWebhook(f *testing.F) {
	for _, b := range lkWebhookSamples(f) {
		f.Add(b, "")
	}
	f.Add([]byte(`{"event":"room_finished","room":{"name":"call-a-1"},"created_at":12}`), "Bearer a.b.c")
	f.Add([]byte(`{"event":1}`), "eyJhbGciOiJub25lIn0.e30.")
	f.Add([]byte(`{"createdAt":"-5","event":"participant_left","participant":null}`), "x")
	cfg := LiveKitConfig{URL: "http://127.0.0.1:1", APIKey: livekittest.Key, APISecret: livekittest.Secret, OutboundTrunkID: "ST_x", AgentName: "a"}
	f.Fuzz(func(t *testing.T, body []byte, auth string) {
		l, err := NewLiveKit(cfg, nil) // fresh replay memory per input
		if err != nil {
			t.Fatal(err)
		}
		ev, err := parseLiveKitWebhook(body, "")
		if err == nil {
			if ev.Event == "" || (ev.EndsCall && ev.RoomName == "") {
				t.Fatalf("bad event %+v", ev)
			}
			if ev.CallID != "" && LiveKitRoomName(ev.CallID, ev.Attempt) != ev.RoomName {
				t.Fatalf("call id %q/%d from room %q", ev.CallID, ev.Attempt, ev.RoomName)
			}
		} else if !errors.Is(err, ErrWebhookInvalid) {
			t.Fatalf("error %v does not wrap ErrWebhookInvalid", err)
		}
		// Without the secret, no header is accepted.
		if _, err := l.HandleWebhook(context.Background(), auth, body); !errors.Is(err, ErrWebhookInvalid) {
			t.Fatalf("accepted unsigned webhook: %v", err)
		}
		// Signed properly, a parsable body is accepted once.
		tok := livekittest.SignWebhook(livekittest.Key, livekittest.Secret, body, time.Now(), time.Now().Add(time.Minute))
		_, err1 := l.HandleWebhook(context.Background(), tok, body)
		if (err1 == nil) != (err == nil) {
			t.Fatalf("signed: %v, parse: %v", err1, err)
		}
	})
}

func FuzzLiveKitTwirpError(f *testing.F) {
	f.Add(400, []byte(`{"code":"invalid_argument","msg":"sip status 486: Busy Here","meta":{"sip_status_code":"486","sip_status":"Busy Here"}}`))
	f.Add(503, []byte(`{"code":"unavailable","msg":"twirp error unknown: no response from servers"}`))
	f.Add(429, []byte(`{"code":"resource_exhausted","msg":"limit exceeded","meta":{"sip_status_code":1e99}}`))
	f.Add(502, []byte(`<html>Bad Gateway</html>`))
	f.Add(400, []byte(`{"code":"x","msg":"SIP STATUS: 999"}`))
	allowed := []string{dial.StatusBusy, dial.StatusNoAnswer, dial.StatusFailed}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		te := parseTwirpError("SIP/CreateSIPParticipant", status, body)
		res, err := sipOutcome(te)
		if err != nil {
			if !errors.Is(err, dial.ErrRetryLater) {
				t.Fatalf("error %v is not ErrRetryLater", err)
			}
			return
		}
		if !slices.Contains(allowed, res.Status) || (res.SIPCode != 0 && (res.SIPCode < 300 || res.SIPCode > 699)) {
			t.Fatalf("outcome %+v", res)
		}
		if res.Status == dial.StatusFailed && res.Reason == "" {
			t.Fatalf("failed without reason: %+v", res)
		}
	})
}

func FuzzParseLiveKitRoomName(f *testing.F) {
	f.Add("call-5f0c1f7e-3b1a-4c2e-9d7a-2b8f6c1e0a11-1")
	f.Add("call--1")
	f.Add("call-a-007")
	f.Fuzz(func(t *testing.T, room string) {
		id, n, ok := ParseLiveKitRoomName(room)
		if ok && LiveKitRoomName(id, n) != room {
			t.Fatalf("%q -> %q %d does not round-trip", room, id, n)
		}
	})
}
