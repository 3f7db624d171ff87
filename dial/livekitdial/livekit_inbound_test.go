package livekitdial

import "testing"

// A SIP participant joining a room agentd did not create is an inbound
// call (from the trunk named, when one is configured); its leaving or its
// room finishing ends it. Our own rooms' participants never are.
func TestLiveKitWebhookInbound(t *testing.T) {
	joined := `{"event":"participant_joined","id":"EV_1","createdAt":"1795320840",
		"room":{"sid":"RM_1","name":"inbound-_+15550001111_abc"},
		"participant":{"sid":"PA_1","identity":"sip_+14155550123","kind":"SIP",
			"attributes":{"sip.phoneNumber":"+14155550123","sip.trunkPhoneNumber":"+15550001111","sip.trunkID":"ST_in"}}}`
	ev, err := parseLiveKitWebhook([]byte(joined), "")
	if err != nil || !ev.Inbound || ev.InboundEnds || ev.From != "+14155550123" || ev.To != "+15550001111" || ev.CallID != "" {
		t.Fatalf("joined: %+v %v", ev, err)
	}
	if ev, _ := parseLiveKitWebhook([]byte(joined), "ST_other"); ev.Inbound {
		t.Fatal("a participant of another inbound trunk counted")
	}
	numeric := `{"event":"participant_joined","id":"EV_2","room":{"name":"r"},"participant":{"identity":"p","kind":3}}`
	if ev, _ := parseLiveKitWebhook([]byte(numeric), ""); !ev.Inbound {
		t.Fatal("numeric kind 3 (SIP) not read")
	}
	ours := `{"event":"participant_joined","id":"EV_3","room":{"name":"call-5f0c1f7e-3b1a-4c2e-9d7a-2b8f6c1e0a11-1"},
		"participant":{"identity":"sip-call-5f0c1f7e-3b1a-4c2e-9d7a-2b8f6c1e0a11-1","kind":"SIP"}}`
	if ev, _ := parseLiveKitWebhook([]byte(ours), ""); ev.Inbound {
		t.Fatal("our outbound participant counted as inbound")
	}
	left := `{"event":"participant_left","id":"EV_4","room":{"name":"inbound-x"},"participant":{"identity":"sip_+1","kind":"SIP"}}`
	if ev, _ := parseLiveKitWebhook([]byte(left), ""); !ev.InboundEnds || ev.EndsCall {
		t.Fatalf("left: %+v", ev)
	}
	finished := `{"event":"room_finished","id":"EV_5","room":{"name":"inbound-x"}}`
	if ev, _ := parseLiveKitWebhook([]byte(finished), ""); !ev.InboundEnds {
		t.Fatalf("room finished: %+v", ev)
	}
}
