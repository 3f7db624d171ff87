package livekitdial

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentd/agentd/dial"
)

// TransferCall is a cold transfer (dial.Transferrer): LiveKit's
// TransferSIPParticipant sends a SIP REFER to the call's participant,
// which leaves the room once the target answered (the call then ends as
// any other LiveKit call does). A busy or unanswered target is a
// *dial.LegError.
func (l *LiveKit) TransferCall(ctx context.Context, c dial.LiveCall, target string) error {
	identity := l.identity(c)
	if identity == "" {
		return dial.ErrNotTransferable
	}
	to := target
	if strings.HasPrefix(to, "+") {
		to = "tel:" + to
	}
	err := l.client.call(ctx, "SIP/TransferSIPParticipant", grantSIPTransfer(c.RoomID), lkTransferSIPParticipantRequest{
		ParticipantIdentity: identity, RoomName: c.RoomID, TransferTo: to, PlayDialtone: true,
	}, nil, l.cfg.RingTimeout+l.cfg.HTTPTimeout)
	if err == nil {
		l.log.Info("call transferred", "call", c.ID, "room", c.RoomID, "to", to)
		return nil
	}
	var te *lkTwirpError
	if errors.As(err, &te) && te.Transport == nil {
		if code, phrase := twirpSIPStatus(te); code >= 300 {
			switch code {
			case 486, 600:
				return &dial.LegError{Status: dial.StatusBusy, Reason: fmt.Sprintf("SIP %d %s", code, phrase)}
			case 408, 480, 487:
				return &dial.LegError{Status: dial.StatusNoAnswer, Reason: fmt.Sprintf("SIP %d %s", code, phrase)}
			}
			return fmt.Errorf("livekit TransferSIPParticipant: SIP %d %s", code, phrase)
		}
	}
	return err
}

// CanTransfer reports whether c is a call of this dialer (dial.Transferrer).
func (l *LiveKit) CanTransfer(c dial.LiveCall) bool { return l.identity(c) != "" }

// identity is the SIP participant of a call of this dialer ("" for any
// other call).
func (l *LiveKit) identity(c dial.LiveCall) string {
	if c.Dialer != l.Name() || c.RoomID == "" {
		return ""
	}
	if _, _, ours := ParseLiveKitRoomName(c.RoomID); ours {
		return liveKitSIPIdentity(c.RoomID) // outbound: the record keeps the participant's sid
	}
	return c.SIPParticipantID // inbound: the identity the webhook named
}
