package livekitdial

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/livekittest"
)

// An answered outbound call is handed on by TransferSIPParticipant: the
// callee's identity in the call's room, the number as a tel: URI, a dial
// tone meanwhile, under a token granting room admin of that room and SIP
// calls (the fake checks the grants exactly). The callee then left the
// room, so the call ends as any other.
func TestLiveKitTransferOutbound(t *testing.T) {
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, 20*time.Millisecond)
	d := startDial(context.Background(), l, lkTestCall)
	p := d.waitStatus(t, dial.StatusActive)
	c := dial.LiveCall{ID: lkTestCall.ID, Dialer: "livekit", RoomID: p.RoomID, SIPParticipantID: p.SIPParticipantID}
	if err := l.TransferCall(context.Background(), c, "+14155550199"); err != nil {
		t.Fatal(err)
	}
	want := `{"participant_identity":"` + lkTestIdentity + `","room_name":"` + lkTestRoom + `","transfer_to":"tel:+14155550199","play_dialtone":true}`
	if got := string(f.Body("SIP/TransferSIPParticipant")); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	res, err := d.wait(t)
	if err != nil || res.Status != dial.StatusCompleted {
		t.Fatalf("after the transfer: %+v %v", res, err)
	}
}

// An inbound call is found by the identity its webhook named; a sip: URI
// is sent as it is.
func TestLiveKitTransferInbound(t *testing.T) {
	f := livekittest.New(t)
	f.Transfer = func(map[string]any) (int, string) { return 200, "{}" }
	l := newTestLiveKit(t, f, -1)
	c := dial.LiveCall{ID: "c-in", Dialer: "livekit", RoomID: "inbound-+15550001111-xyz", SIPParticipantID: "sip_+14155550123"}
	if err := l.TransferCall(context.Background(), c, "sip:desk@pbx.example.com"); err != nil {
		t.Fatal(err)
	}
	want := `{"participant_identity":"sip_+14155550123","room_name":"inbound-+15550001111-xyz","transfer_to":"sip:desk@pbx.example.com","play_dialtone":true}`
	if got := string(f.Body("SIP/TransferSIPParticipant")); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

// A refused transfer says why: busy and no answer as a *dial.LegError,
// any other SIP status or Twirp error named; another dialer's call is
// not sent to LiveKit at all.
func TestLiveKitTransferRefused(t *testing.T) {
	meta := func(code, status string) map[string]string {
		return map[string]string{"sip_status_code": code, "sip_status": status}
	}
	c := dial.LiveCall{ID: "c1", Dialer: "livekit", RoomID: "inbound-room", SIPParticipantID: "sip_+14155550123"}
	for _, tc := range []struct {
		name        string
		status      int
		code, msg   string
		meta        map[string]string
		leg, detail string
	}{
		{"busy", 400, "invalid_argument", "sip status 486: Busy Here", meta("486", "Busy Here"), dial.StatusBusy, "SIP 486 Busy Here"},
		{"no answer", 400, "invalid_argument", "sip status 480", meta("480", "Temporarily Unavailable"), dial.StatusNoAnswer, "SIP 480"},
		{"declined", 400, "invalid_argument", "sip status 603: Decline", nil, "", "SIP 603 Decline"},
		{"refer not allowed", 412, "failed_precondition", "transfer failed: REFER not allowed", nil, "", "REFER not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := livekittest.New(t)
			f.Transfer = func(map[string]any) (int, string) { return livekittest.TwirpError(tc.status, tc.code, tc.msg, tc.meta) }
			l := newTestLiveKit(t, f, -1)
			err := l.TransferCall(context.Background(), c, "+14155550199")
			var le *dial.LegError
			if err == nil || !strings.Contains(err.Error(), tc.detail) || errors.As(err, &le) != (tc.leg != "") || (le != nil && le.Status != tc.leg) {
				t.Fatalf("err %v (leg %+v), want %q %q", err, le, tc.leg, tc.detail)
			}
		})
	}
	f := livekittest.New(t)
	l := newTestLiveKit(t, f, -1)
	for _, other := range []dial.LiveCall{{ID: "c2", Dialer: "sip", RoomID: "r"}, {ID: "c3", Dialer: "livekit"}} {
		if err := l.TransferCall(context.Background(), other, "+14155550199"); !errors.Is(err, dial.ErrNotTransferable) {
			t.Errorf("%+v: %v", other, err)
		}
	}
	if len(f.Methods()) != 0 {
		t.Errorf("LiveKit was called: %v", f.Methods())
	}
}
