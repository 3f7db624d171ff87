package api

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/dial/sipdial"
	"github.com/agentd/agentd/internal/testkit/livekittest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// inboundList reads the organization's inbound calls.
func (e *testEnv) inboundList(key string) []map[string]any {
	e.t.Helper()
	var out struct {
		Data struct{ Calls []map[string]any }
	}
	if code := e.doJSON("GET", "/api/v1/calls?direction=inbound", key, nil, &out); code != 200 {
		e.t.Fatalf("list inbound: %d", code)
	}
	return out.Data.Calls
}

// An INVITE from sipp (a caller) to a voice agent's number, sent to the
// SIP dialer's socket, is answered and ends as an inbound call record:
// agent, caller, number called, completed, with the talk time.
func TestInboundSIPCall(t *testing.T) {
	port := sipptest.FreePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	e := newTestEnv(t, func(c *serveConfig) {
		c.Calls = calls.Config{Dialer: "sip", DialCPS: 5, MaxConcurrent: 10, Poll: 100 * time.Millisecond,
			Lease: 5 * time.Second, Drain: 2 * time.Second,
			Telephony: calls.TelephonyConfig{SIP: sipdial.Config{Trunk: "127.0.0.1:9", ListenAddr: listen}}}
	})
	agent := e.voiceAgent(e.orgID) // +15550001111
	sp := sipptest.Start(t, "inbound_call", sipptest.Options{Calls: 1, Args: []string{"-s", "+15550001111", listen}})
	if code := sp.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d", code)
	}
	var got []map[string]any
	waitFor(t, "inbound call completed", 5*time.Second, func() bool {
		got = e.inboundList(e.key)
		return len(got) == 1 && got[0]["status"] == "completed"
	})
	c := got[0]
	meta, _ := c["metadata"].(map[string]any)
	dur, _ := c["duration"].(float64)
	if c["direction"] != "inbound" || c["agentId"] != agent.ID || c["phoneNumber"] != "+14155550123" ||
		meta["to_phone_number"] != "+15550001111" || c["dialer"] != "sip" || dur < 0.8 || dur > 3 {
		t.Fatalf("inbound call: %+v", c)
	}
	rec := e.getCall(e.key, c["id"].(string))
	if len(rec.AttemptHistory) != 1 || rec.AttemptHistory[0].Status != "completed" {
		t.Fatalf("attempts: %+v", rec.AttemptHistory)
	}
	var out struct {
		Data struct{ Calls []map[string]any }
	}
	if e.doJSON("GET", "/api/v1/calls?direction=outbound", e.key, nil, &out); len(out.Data.Calls) != 0 {
		t.Fatalf("inbound call listed as outbound: %+v", out.Data.Calls)
	}
}

// A SIP participant that LiveKit let in through an inbound trunk (its
// webhook participant_joined, in a room agentd did not create) is recorded
// as an inbound call and ended by participant_left.
func TestInboundLiveKitWebhook(t *testing.T) {
	fake := livekittest.New(t)
	e := newTestEnv(t, liveKitDialer(fake.URL, "ST_trunk"))
	agent := e.voiceAgent(e.orgID)
	joined := func(id, event string) []byte {
		b, _ := json.Marshal(map[string]any{"event": event, "id": id, "createdAt": strconv.FormatInt(time.Now().Unix(), 10),
			"room": map[string]any{"sid": "RM_in", "name": "inbound-+15550001111-xyz"},
			"participant": map[string]any{"sid": "PA_in", "identity": "sip_+14155550123", "kind": "SIP",
				"attributes": map[string]string{"sip.phoneNumber": "+14155550123", "sip.trunkPhoneNumber": "+15550001111"}}})
		return b
	}
	exp := time.Now().Add(time.Minute)
	body := joined("EV_in_1", "participant_joined")
	if code, resp := e.postWebhook(telSign(livekittest.Key, livekittest.Secret, body, exp), body); code != 200 {
		t.Fatalf("joined: %d %s", code, resp)
	}
	got := e.inboundList(e.key)
	if len(got) != 1 || got[0]["status"] != "active" || got[0]["agentId"] != agent.ID || got[0]["dialer"] != "livekit" ||
		got[0]["roomId"] != "inbound-+15550001111-xyz" {
		t.Fatalf("after joined: %+v", got)
	}
	// Webhook times have second precision: the next event must carry a
	// later second, so the wall clock itself has to move (no event to wait on).
	time.Sleep(1100 * time.Millisecond)
	body = joined("EV_in_2", "participant_left")
	if code, resp := e.postWebhook(telSign(livekittest.Key, livekittest.Secret, body, exp), body); code != 200 {
		t.Fatalf("left: %d %s", code, resp)
	}
	got = e.inboundList(e.key)
	if len(got) != 1 || got[0]["status"] != "completed" || got[0]["duration"] == nil {
		t.Fatalf("after left: %+v", got)
	}
}
