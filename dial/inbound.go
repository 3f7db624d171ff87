package dial

import (
	"context"
	"errors"
	"time"
)

// Inbound calls: a dialer that learns of a call coming in to one of the
// organization's numbers (the SIP dialer receiving an INVITE, LiveKit's
// webhook reporting a SIP participant from an inbound trunk) reports it to
// an Inbound, which records it (app/calls) and is told when it ends.

// InboundCall is a call that came in.
type InboundCall struct {
	From   string // the caller, E.164 when the network gave one
	To     string // our number that was called
	Dialer string // sip or livekit
	Key    string // the dialer's id of the call: SIP Call-ID, LiveKit participant identity
	RoomID string // LiveKit room, "" for SIP
	At     time.Time
}

// Inbound records inbound calls.
type Inbound interface {
	// InboundStarted records an answered inbound call and returns its id;
	// ErrNoAgent refuses the call (no voice agent has the number).
	InboundStarted(ctx context.Context, c InboundCall) (string, error)
	// InboundEnded ends the call started with c's Dialer and Key (and
	// RoomID when set): status completed or failed (with reason).
	InboundEnded(ctx context.Context, c InboundCall, status, reason string)
}

// ErrNoAgent is returned by an Inbound for a number no voice agent has.
var ErrNoAgent = errors.New("no voice agent has this number")
