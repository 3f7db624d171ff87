package dial

import (
	"context"
	"errors"
)

// Transferrer hands an answered call to someone else through the dialer
// that carries it, when the voice loop is not agentd's (LiveKit's
// TransferSIPParticipant: a cold transfer, the caller leaves the room).
// Features see this interface, never the dialer's package.
type Transferrer interface {
	// CanTransfer reports whether c is a call of this dialer it can hand on.
	CanTransfer(c LiveCall) bool
	// TransferCall sends the call's SIP participant to target (an E.164
	// number or a sip: URI) and returns once the far end took it. A
	// target that was busy or did not answer is a *LegError.
	TransferCall(ctx context.Context, c LiveCall, target string) error
}

// LiveCall is what a dialer needs to find an answered call of its own.
type LiveCall struct {
	ID               string
	Dialer           string // the dialer that carries it: only its own calls are transferred
	RoomID           string // LiveKit room
	SIPParticipantID string // LiveKit: the participant's id (outbound) or identity (inbound)
}

// ErrNotTransferable: the call is not one the dialer can transfer (another
// dialer's, or not answered through it).
var ErrNotTransferable = errors.New("this call cannot be transferred by the dialer")
