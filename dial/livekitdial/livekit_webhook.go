package livekitdial

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrWebhookInvalid refuses a webhook whose token is missing, forged, expired
// or issued by another key, whose body does not match the token's sha256
// claim, or whose body is not a webhook event.
var ErrWebhookInvalid = errors.New("livekit webhook: invalid")

// ErrWebhookReplay refuses a webhook event already received while its token
// is still valid.
var ErrWebhookReplay = errors.New("livekit webhook: replayed event")

// WebhookEvent is a verified LiveKit webhook event. Webhooks may reach an
// agentd process other than the one dialing, so the event names the call
// (from the room name) for the caller to update the database itself.
type WebhookEvent struct {
	ID                  string    // LiveKit's event id
	Event               string    // room_finished, participant_left, ...
	RoomName            string    // "call-<callID>-<attempt>" for our rooms
	RoomSID             string    //
	ParticipantIdentity string    // participant_* events
	ParticipantSID      string    //
	CreatedAt           time.Time // when LiveKit emitted the event (second precision)
	CallID              string    // from RoomName; empty for rooms agentd did not create
	Attempt             int       // from RoomName
	// EndsCall is true for room_finished, and for participant_left (or
	// participant_connection_aborted) of the callee's SIP participant.
	EndsCall bool
	// Delivered is true when a Dial in this process was waiting for the room
	// and took the event: that Dial reports the end of the call itself.
	Delivered bool

	// Inbound is true for participant_joined of a SIP participant in a room
	// agentd did not create: a call that came in through an inbound trunk
	// (the configured InboundTrunkID, when set). From is the caller, To the
	// number called (the participant's sip.phoneNumber and
	// sip.trunkPhoneNumber attributes).
	Inbound  bool
	From, To string
	// InboundEnds is true when the event ends such a call: that SIP
	// participant left, or its room finished.
	InboundEnds bool
}

// lkInt64 reads an int64 that protojson writes as a string ("1700000000")
// and other encoders as a number.
type lkInt64 int64

func (n *lkInt64) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	*n = lkInt64(v)
	return err
}

// lkWebhookBody is the JSON of a livekit.WebhookEvent. LiveKit sends
// protojson's lowerCamelCase names; the proto names are read as well.
type lkWebhookBody struct {
	Event          string  `json:"event"`
	ID             string  `json:"id"`
	CreatedAt      lkInt64 `json:"createdAt"`
	CreatedAtProto lkInt64 `json:"created_at"`
	Room           *struct {
		SID  string `json:"sid"`
		Name string `json:"name"`
	} `json:"room"`
	Participant *struct {
		SID        string            `json:"sid"`
		Identity   string            `json:"identity"`
		Kind       json.RawMessage   `json:"kind"` // "SIP" (protojson) or 3
		Attributes map[string]string `json:"attributes"`
	} `json:"participant"`
}

// lkKindSIP is ParticipantInfo.Kind SIP as a number.
const lkKindSIP = "3"

// parseLiveKitWebhook decodes a webhook body into an event (without
// verification, replay checks or delivery).
// inboundTrunk, when set, is the only inbound trunk whose participants
// count as inbound calls.
func parseLiveKitWebhook(body []byte, inboundTrunk string) (WebhookEvent, error) {
	var b lkWebhookBody
	if err := json.Unmarshal(body, &b); err != nil {
		return WebhookEvent{}, fmt.Errorf("%w: body: %v", ErrWebhookInvalid, err)
	}
	if b.Event == "" {
		return WebhookEvent{}, fmt.Errorf("%w: body has no event", ErrWebhookInvalid)
	}
	ev := WebhookEvent{ID: b.ID, Event: b.Event}
	created := b.CreatedAt
	if created == 0 {
		created = b.CreatedAtProto
	}
	if created > 0 && created < 1<<40 {
		ev.CreatedAt = time.Unix(int64(created), 0).UTC()
	}
	if b.Room != nil {
		ev.RoomName, ev.RoomSID = b.Room.Name, b.Room.SID
	}
	sipKind := false
	if p := b.Participant; p != nil {
		ev.ParticipantIdentity, ev.ParticipantSID = p.Identity, p.SID
		k := strings.Trim(string(p.Kind), `"`)
		sipKind = k == "SIP" || k == lkKindSIP
	}
	ev.CallID, ev.Attempt, _ = ParseLiveKitRoomName(ev.RoomName)
	ours := ev.CallID != ""
	sipIn := sipKind && !ours && ev.RoomName != "" && ev.ParticipantIdentity != ""
	if sipIn && inboundTrunk != "" && b.Participant.Attributes["sip.trunkID"] != inboundTrunk {
		sipIn = false
	}
	if sipIn {
		ev.From, ev.To = b.Participant.Attributes["sip.phoneNumber"], b.Participant.Attributes["sip.trunkPhoneNumber"]
	}
	switch ev.Event {
	case "participant_joined":
		ev.Inbound = sipIn
	case "participant_left", "participant_connection_aborted":
		ev.InboundEnds = sipIn
	case "room_finished":
		ev.InboundEnds = !ours && ev.RoomName != ""
	}
	switch ev.Event {
	case "room_finished":
		ev.EndsCall = ev.RoomName != ""
	case "participant_left", "participant_connection_aborted":
		ev.EndsCall = ev.RoomName != "" && ev.ParticipantIdentity == liveKitSIPIdentity(ev.RoomName)
	}
	return ev, nil
}

// HandleWebhook verifies and parses one LiveKit webhook request as LiveKit
// signs them: authHeader holds an HS256 token (raw or "Bearer ...") issued by
// the API key whose sha256 claim is the base64 SHA-256 of body. Each event is
// accepted once while its token is valid. A Dial in this process waiting for
// the event's room is woken. Errors wrap ErrWebhookInvalid or ErrWebhookReplay
// and leave everything unchanged.
func (l *LiveKit) HandleWebhook(ctx context.Context, authHeader string, body []byte) (WebhookEvent, error) {
	if authHeader == "" {
		return WebhookEvent{}, fmt.Errorf("%w: no Authorization header", ErrWebhookInvalid)
	}
	now := l.client.now()
	claims, err := verifyLKToken(authHeader, l.cfg.APIKey, l.cfg.APISecret, now)
	if err != nil {
		return WebhookEvent{}, fmt.Errorf("%w: %v", ErrWebhookInvalid, err)
	}
	sum := sha256.Sum256(body)
	hash := base64.StdEncoding.EncodeToString(sum[:])
	if claims.Sha256 == "" || subtle.ConstantTimeCompare([]byte(claims.Sha256), []byte(hash)) != 1 {
		return WebhookEvent{}, fmt.Errorf("%w: body does not match the token's sha256", ErrWebhookInvalid)
	}
	ev, err := parseLiveKitWebhook(body, l.cfg.InboundTrunkID)
	if err != nil {
		return WebhookEvent{}, err
	}
	key := "id:" + ev.ID
	if ev.ID == "" {
		key = "sha256:" + hash
	}
	forgetAt := time.Unix(claims.ExpiresAt, 0).Add(lkTokenLeeway)

	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.pruned) > lkTokenLeeway {
		// Forget keys whose tokens expired: a replay of those fails on expiry.
		for k, t := range l.seen {
			if now.After(t) {
				delete(l.seen, k)
			}
		}
		l.pruned = now
	}
	if t, dup := l.seen[key]; dup && !now.After(t) {
		return WebhookEvent{}, fmt.Errorf("%w: %s", ErrWebhookReplay, key)
	}
	l.seen[key] = forgetAt
	if w := l.waiters[ev.RoomName]; w != nil && ev.RoomName != "" {
		select {
		case w.events <- ev:
			ev.Delivered = true
		default:
			l.log.Warn("webhook dropped: waiter full", "room", ev.RoomName, "event", ev.Event)
		}
	}
	return ev, nil
}

// watch registers a Dial waiting for room's webhook events.
func (l *LiveKit) watch(room string) *lkWaiter {
	w := &lkWaiter{events: make(chan WebhookEvent, 16)}
	l.mu.Lock()
	l.waiters[room] = w
	l.mu.Unlock()
	return w
}

// unwatch removes w unless another Dial has taken the room since.
func (l *LiveKit) unwatch(room string, w *lkWaiter) {
	l.mu.Lock()
	if l.waiters[room] == w {
		delete(l.waiters, room)
	}
	l.mu.Unlock()
}
