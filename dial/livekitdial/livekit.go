package livekitdial

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/dial"
)

// LiveKitConfig configures the LiveKit dialer.
type LiveKitConfig struct {
	// URL of the LiveKit server: http(s)://host[:port]; ws:// and wss:// are
	// accepted and mapped to http:// and https://.
	URL       string
	APIKey    string
	APISecret string
	// OutboundTrunkID is the SIP outbound trunk calls are placed through (ST_...).
	OutboundTrunkID string
	// InboundTrunkID, when set, is the inbound trunk whose SIP participants
	// are recorded as inbound calls; empty: any SIP participant joining a
	// room agentd did not create.
	InboundTrunkID string
	// AgentName is the LiveKit agent dispatched into each call's room.
	AgentName string
	// RingTimeout is how long the callee may ring (default 30 s).
	RingTimeout time.Duration
	// PollInterval is how often a call in progress is checked through the
	// API when no webhook ends it (default 5 s; negative disables polling).
	PollInterval time.Duration
	// HTTPTimeout bounds each API request other than the dial itself
	// (default 10 s).
	HTTPTimeout time.Duration
}

// LiveKit places calls through a LiveKit server: one room per attempt, the
// agent dispatched into it, and a SIP participant dialled out through the
// outbound trunk. It talks to LiveKit's Twirp API directly.
type LiveKit struct {
	cfg    LiveKitConfig
	client *lkClient
	log    *slog.Logger

	mu      sync.Mutex
	waiters map[string]*lkWaiter // room name -> Dial waiting for its end
	seen    map[string]time.Time // webhook replay keys -> forget after
	pruned  time.Time            // last sweep of seen
}

// lkWaiter receives the webhook events of one room while Dial waits.
type lkWaiter struct {
	events chan WebhookEvent
}

// NewLiveKit checks cfg and returns a LiveKit dialer. log may be nil.
func NewLiveKit(cfg LiveKitConfig, log *slog.Logger) (*LiveKit, error) {
	base, err := liveKitBaseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.APIKey == "" || cfg.APISecret == "":
		return nil, errors.New("livekit: API key and secret are required")
	case cfg.OutboundTrunkID == "":
		return nil, errors.New("livekit: outbound trunk id is required")
	case cfg.AgentName == "":
		return nil, errors.New("livekit: agent name is required")
	}
	if cfg.RingTimeout <= 0 {
		cfg.RingTimeout = 30 * time.Second
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 5 * time.Second
	}
	if cfg.HTTPTimeout <= 0 {
		cfg.HTTPTimeout = 10 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &LiveKit{
		cfg: cfg,
		client: &lkClient{
			base: base, apiKey: cfg.APIKey, apiSecret: cfg.APISecret,
			http: &http.Client{}, now: time.Now,
		},
		log:     log.With("dialer", "livekit"),
		waiters: make(map[string]*lkWaiter),
		seen:    make(map[string]time.Time),
	}, nil
}

// liveKitBaseURL maps the configured URL to the HTTP base of the API.
func liveKitBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("livekit: URL %q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "http", "https":
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("livekit: URL scheme %q is not http, https, ws or wss", u.Scheme)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"), nil
}

// Name returns "livekit".
func (l *LiveKit) Name() string { return "livekit" }

// LiveKitRoomName is the room of one attempt of a call: "call-<callID>-<attempt>".
// Progress.RoomID holds this name (not the room sid) because every other
// LiveKit API and every webhook names rooms by it.
func LiveKitRoomName(callID string, attempt int) string {
	return "call-" + callID + "-" + strconv.Itoa(attempt)
}

// ParseLiveKitRoomName returns the call id and attempt of a room named by
// LiveKitRoomName; ok is false for any other room.
func ParseLiveKitRoomName(room string) (callID string, attempt int, ok bool) {
	rest, found := strings.CutPrefix(room, "call-")
	i := strings.LastIndexByte(rest, '-')
	if !found || i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 1 || strconv.Itoa(n) != rest[i+1:] {
		return "", 0, false
	}
	return rest[:i], n, true
}

// liveKitSIPIdentity is the identity of the callee's participant in room.
// It is derived from the room name so a webhook alone tells whether the
// callee left, also in another agentd process.
func liveKitSIPIdentity(room string) string { return "sip-" + room }

// lkJobMetadata is what the dispatched agent receives as job metadata (and
// the room carries as room metadata).
type lkJobMetadata struct {
	CallID       string         `json:"callId"`
	Attempt      int            `json:"attempt"`
	AgentID      string         `json:"agentId"`
	AgentName    string         `json:"agentName"`
	Instructions string         `json:"instructions"`
	PhoneNumber  string         `json:"phoneNumber"`
	CallerID     string         `json:"callerId"`
	Metadata     map[string]any `json:"metadata"`
}

// Dial places one attempt: CreateRoom (connecting), CreateDispatch, then
// CreateSIPParticipant waiting for the answer (ringing, then active), and
// waits for the end of the call (webhook, or polling as a fallback).
func (l *LiveKit) Dial(ctx context.Context, c dial.Call, progress func(dial.Progress)) (dial.Result, error) {
	if progress == nil {
		progress = func(dial.Progress) {}
	}
	room := LiveKitRoomName(c.ID, c.Attempt)
	identity := liveKitSIPIdentity(room)
	meta := lkJobMetadata{
		CallID: c.ID, Attempt: c.Attempt, AgentID: c.AgentID, AgentName: c.AgentName,
		Instructions: c.Instructions, PhoneNumber: c.PhoneNumber, CallerID: c.CallerID,
		Metadata: c.Metadata,
	}
	if meta.Metadata == nil {
		meta.Metadata = map[string]any{}
	}
	metaJSON, err := lkMarshal(meta)
	if err != nil {
		return dial.Result{}, fmt.Errorf("livekit: call metadata: %w", err)
	}
	// Watch the room before anything exists so no webhook is missed.
	w := l.watch(room)
	defer l.unwatch(room, w)
	log := l.log.With("call", c.ID, "attempt", c.Attempt, "room", room)

	var rm lkRoom
	err = l.client.call(ctx, "RoomService/CreateRoom", grantRoomCreate(), lkCreateRoomRequest{
		Name: room,
		// The room waits for the callee and the agent at most this long.
		EmptyTimeout: uint32((l.cfg.RingTimeout + l.cfg.HTTPTimeout + time.Minute).Seconds()),
		Metadata:     string(metaJSON),
	}, &rm, l.cfg.HTTPTimeout)
	if err != nil {
		if ctx.Err() != nil {
			l.deleteRoom(ctx, room) // in case it was created before the cancel
			return dial.Result{Status: dial.StatusCancelled}, nil
		}
		return dial.Result{}, setupError(err)
	}
	log.Debug("room created", "sid", rm.SID)
	p := dial.Progress{Status: dial.StatusConnecting, At: time.Now(), RoomID: room}
	progress(p)

	var d lkDispatch
	err = l.client.call(ctx, "AgentDispatchService/CreateDispatch", grantRoomAdmin(room), lkCreateDispatchRequest{
		AgentName: l.cfg.AgentName, Room: room, Metadata: string(metaJSON),
	}, &d, l.cfg.HTTPTimeout)
	if err != nil {
		l.deleteRoom(ctx, room)
		if ctx.Err() != nil {
			return dial.Result{Status: dial.StatusCancelled}, nil
		}
		return dial.Result{}, setupError(err)
	}
	p.JobID = d.ID

	p.Status, p.At = dial.StatusRinging, time.Now()
	progress(p)
	var sp lkSIPParticipant
	err = l.client.call(ctx, "SIP/CreateSIPParticipant", grantSIPCall(), lkCreateSIPParticipantRequest{
		SIPTrunkID: l.cfg.OutboundTrunkID, SIPCallTo: c.PhoneNumber, SIPNumber: c.CallerID,
		RoomName: room, ParticipantIdentity: identity, ParticipantName: c.PhoneNumber,
		WaitUntilAnswered: true,
		RingingTimeout:    strconv.FormatFloat(l.cfg.RingTimeout.Seconds(), 'f', -1, 64) + "s",
	}, &sp, l.cfg.RingTimeout+l.cfg.HTTPTimeout)
	if err != nil {
		// Deleting the room also ends a SIP leg that may still be ringing.
		l.deleteRoom(ctx, room)
		if ctx.Err() != nil {
			return dial.Result{Status: dial.StatusCancelled}, nil
		}
		res, err := sipOutcome(err)
		log.Info("call not answered", "status", res.Status, "sip", res.SIPCode, "reason", res.Reason, "err", err)
		return res, err
	}
	answered := time.Now()
	p.SIPParticipantID = sp.ParticipantID
	p.Status, p.At = dial.StatusActive, answered
	progress(p)
	log.Info("call answered", "participant", sp.ParticipantID, "sipCallId", sp.SIPCallID)
	return l.await(ctx, w, room, rm.SID, identity, answered)
}

// await waits for the end of an answered call: a webhook naming the room, the
// room or callee gone when polled, or ctx cancelled (hang up). Webhooks of an
// earlier room with the same name (an attempt re-queued by ErrRetryLater
// reuses the name) carry another sid and are ignored.
func (l *LiveKit) await(ctx context.Context, w *lkWaiter, room, sid, identity string, answered time.Time) (dial.Result, error) {
	var tick <-chan time.Time
	if l.cfg.PollInterval > 0 {
		t := time.NewTicker(l.cfg.PollInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			l.hangUp(ctx, room, identity)
			return dial.Result{Status: dial.StatusCancelled}, nil
		case ev := <-w.events:
			if !ev.EndsCall || (sid != "" && ev.RoomSID != "" && ev.RoomSID != sid) {
				continue
			}
			end := time.Now()
			if ev.Event != "room_finished" {
				l.deleteRoom(ctx, room) // the agent leaves too
			}
			l.log.Info("call ended", "room", room, "by", "webhook", "event", ev.Event)
			return dial.Result{Status: dial.StatusCompleted, Duration: end.Sub(answered)}, nil
		case <-tick:
			gone, err := l.calleeGone(ctx, room, identity)
			if err != nil {
				if ctx.Err() == nil {
					l.log.Warn("poll failed", "room", room, "err", err)
				}
				continue
			}
			if gone {
				end := time.Now()
				l.deleteRoom(ctx, room)
				l.log.Info("call ended", "room", room, "by", "poll")
				return dial.Result{Status: dial.StatusCompleted, Duration: end.Sub(answered)}, nil
			}
		}
	}
}

// calleeGone reports whether room no longer exists or no longer holds the
// callee's participant.
func (l *LiveKit) calleeGone(ctx context.Context, room, identity string) (bool, error) {
	var rooms lkListRoomsResponse
	if err := l.client.call(ctx, "RoomService/ListRooms", grantRoomList(),
		lkListRoomsRequest{Names: []string{room}}, &rooms, l.cfg.HTTPTimeout); err != nil {
		return false, err
	}
	found := false
	for _, r := range rooms.Rooms {
		found = found || r.Name == room
	}
	if !found {
		return true, nil
	}
	var ps lkListParticipantsResponse
	if err := l.client.call(ctx, "RoomService/ListParticipants", grantRoomAdmin(room),
		lkRoomRequest{Room: room}, &ps, l.cfg.HTTPTimeout); err != nil {
		return false, err
	}
	for _, p := range ps.Participants {
		if p.Identity == identity && !participantDisconnected(p.State) {
			return false, nil
		}
	}
	return true, nil
}

func participantDisconnected(state any) bool {
	return state == "DISCONNECTED" || state == float64(3)
}

// hangUp removes the callee and deletes the room; used on cancel, with a
// context that outlives the cancelled one.
func (l *LiveKit) hangUp(ctx context.Context, room, identity string) {
	cctx := context.WithoutCancel(ctx)
	err := l.client.call(cctx, "RoomService/RemoveParticipant", grantRoomAdmin(room),
		lkParticipantRequest{Room: room, Identity: identity}, nil, l.cfg.HTTPTimeout)
	if err != nil {
		l.log.Warn("remove participant failed", "room", room, "err", err)
	}
	l.deleteRoom(ctx, room)
}

// deleteRoom ends the room (and every participant in it), best effort.
func (l *LiveKit) deleteRoom(ctx context.Context, room string) {
	err := l.client.call(context.WithoutCancel(ctx), "RoomService/DeleteRoom", grantRoomCreate(),
		lkRoomRequest{Room: room}, nil, l.cfg.HTTPTimeout)
	var te *lkTwirpError
	if err != nil && !(errors.As(err, &te) && te.Code == "not_found") {
		l.log.Warn("delete room failed", "room", room, "err", err)
	}
}

// CheckTrunk verifies that the configured outbound trunk exists, so a wrong
// trunk id shows at start rather than on the first call.
func (l *LiveKit) CheckTrunk(ctx context.Context) error {
	var resp lkListOutboundTrunkResponse
	err := l.client.call(ctx, "SIP/ListSIPOutboundTrunk", grantSIPAdmin(),
		lkListOutboundTrunkRequest{TrunkIDs: []string{l.cfg.OutboundTrunkID}}, &resp, l.cfg.HTTPTimeout)
	if err != nil {
		return err
	}
	for _, t := range resp.Items {
		if t != nil && t.SIPTrunkID == l.cfg.OutboundTrunkID {
			return nil
		}
	}
	return fmt.Errorf("livekit: outbound trunk %q not found", l.cfg.OutboundTrunkID)
}

// setupError maps a failure before dialing. Nothing rang yet, so an
// unreachable server or a limit answer re-queues the attempt (ErrRetryLater;
// the queue bounds how often); anything else fails the attempt.
func setupError(err error) error {
	var te *lkTwirpError
	if errors.As(err, &te) && te.limited() {
		return &dial.Pushback{Reason: err.Error()}
	}
	if errors.As(err, &te) && (te.unreachable() || te.Code == "unavailable") {
		return fmt.Errorf("%w: %v", dial.ErrRetryLater, err)
	}
	return err
}
