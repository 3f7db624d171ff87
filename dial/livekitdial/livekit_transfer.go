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
	if c.Dialer != l.Name() || c.RoomID == "" {
		return dial.ErrNotTransferable
	}
	identity := c.SIPParticipantID // inbound: the identity the webhook named
	if _, _, ours := ParseLiveKitRoomName(c.RoomID); ours {
		identity = liveKitSIPIdentity(c.RoomID) // outbound: the record keeps the participant's sid
	}
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
