package livekitdial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// lkClient calls LiveKit's server API: Twirp over HTTP with JSON bodies.
// Requests use the proto field names (snake_case), which is also what the
// server's Twirp handlers emit in responses.
type lkClient struct {
	base      string // http(s)://host[:port], no trailing slash
	apiKey    string
	apiSecret string
	http      *http.Client
	now       func() time.Time
}

// lkTwirpError is an error answer of the LiveKit API, or a transport failure
// (Transport set) when no answer came at all.
type lkTwirpError struct {
	Method     string            // e.g. "SIP/CreateSIPParticipant"
	HTTPStatus int               // 0 on transport failure
	Code       string            // Twirp error code, e.g. "not_found"
	Msg        string            // Twirp message or a short body excerpt
	Meta       map[string]string // Twirp meta (sip_status_code, sip_status, ...)
	Transport  error             // set when the request got no HTTP answer
}

func (e *lkTwirpError) Error() string {
	if e.Transport != nil {
		return fmt.Sprintf("livekit %s: %v", e.Method, e.Transport)
	}
	if e.Code != "" {
		return fmt.Sprintf("livekit %s: %s: %s", e.Method, e.Code, e.Msg)
	}
	return fmt.Sprintf("livekit %s: HTTP %d: %s", e.Method, e.HTTPStatus, e.Msg)
}

func (e *lkTwirpError) Unwrap() error { return e.Transport }

// unreachable reports whether the server could not be reached or its proxy
// said it is down: nothing was done, so the same step may be tried later.
func (e *lkTwirpError) unreachable() bool {
	if e.Transport != nil {
		return !errors.Is(e.Transport, context.Canceled)
	}
	if e.Code == "" {
		switch e.HTTPStatus {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
	}
	return false
}

// limited reports a rate, CPS or concurrency limit answer.
func (e *lkTwirpError) limited() bool {
	if e.Code == "resource_exhausted" || e.HTTPStatus == http.StatusTooManyRequests {
		return true
	}
	m := strings.ToLower(e.Msg + " " + e.Meta["sip_status"])
	return strings.Contains(m, "limit exceeded") || strings.Contains(m, "too many concurrent")
}

// lkMaxResponse caps how much of an answer is read.
const lkMaxResponse = 4 << 20

// call POSTs req as JSON to /twirp/livekit.<method> with a token carrying
// grants, and decodes the answer into resp (when not nil). timeout bounds the
// request and is passed to the server as X-Twirp-Timeout-Ms.
func (c *lkClient) call(ctx context.Context, method string, grants lkClaims, req, resp any, timeout time.Duration) error {
	body, err := lkMarshal(req)
	if err != nil {
		return err
	}
	now := c.now()
	grants.Issuer = c.apiKey
	if grants.Subject == "" {
		grants.Subject = "agentd"
	}
	grants.IssuedAt = now.Unix()
	grants.NotBefore = now.Unix()
	// Short-lived: the token only has to outlive this one request.
	grants.ExpiresAt = now.Add(timeout + time.Minute).Unix()
	token, err := signLKToken(c.apiSecret, grants)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/twirp/livekit."+method, bytes.NewReader(body))
	if err != nil {
		return &lkTwirpError{Method: method, Transport: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+token)
	hreq.Header.Set("X-Twirp-Timeout-Ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return &lkTwirpError{Method: method, Transport: err}
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, lkMaxResponse))
	if err != nil {
		return &lkTwirpError{Method: method, Transport: err}
	}
	if hresp.StatusCode != http.StatusOK {
		return parseTwirpError(method, hresp.StatusCode, data)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return &lkTwirpError{Method: method, HTTPStatus: hresp.StatusCode, Msg: "undecodable answer: " + err.Error()}
	}
	return nil
}

// lkMarshal encodes v as compact JSON without HTML escaping, so metadata
// such as instructions reaches the agent as written.
func lkMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// parseTwirpError reads a Twirp error body {code, msg, meta}. Bodies that are
// not Twirp errors (a proxy's HTML page) keep the HTTP status and an excerpt.
func parseTwirpError(method string, status int, data []byte) *lkTwirpError {
	e := &lkTwirpError{Method: method, HTTPStatus: status}
	var body struct {
		Code string         `json:"code"`
		Msg  string         `json:"msg"`
		Meta map[string]any `json:"meta"`
	}
	if json.Unmarshal(data, &body) == nil && body.Code != "" {
		e.Code, e.Msg = body.Code, body.Msg
		if len(body.Meta) > 0 {
			e.Meta = make(map[string]string, len(body.Meta))
			for k, v := range body.Meta {
				if s, ok := v.(string); ok {
					e.Meta[k] = s
				} else {
					e.Meta[k] = fmt.Sprint(v)
				}
			}
		}
		return e
	}
	msg := strings.TrimSpace(string(data))
	if len(msg) > 200 {
		msg = msg[:200]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e.Msg = msg
	return e
}

// Request and answer bodies of the LiveKit API (subset of livekit/protocol).

type lkCreateRoomRequest struct {
	Name             string `json:"name"`
	EmptyTimeout     uint32 `json:"empty_timeout,omitempty"`
	DepartureTimeout uint32 `json:"departure_timeout,omitempty"`
	Metadata         string `json:"metadata,omitempty"`
}

type lkRoom struct {
	SID             string `json:"sid"`
	Name            string `json:"name"`
	NumParticipants uint32 `json:"num_participants"`
}

type lkRoomRequest struct {
	Room string `json:"room"`
}

type lkListRoomsRequest struct {
	Names []string `json:"names"`
}

type lkListRoomsResponse struct {
	Rooms []lkRoom `json:"rooms"`
}

type lkParticipant struct {
	SID      string `json:"sid"`
	Identity string `json:"identity"`
	State    any    `json:"state"` // enum name or number
	Kind     any    `json:"kind"`
}

type lkListParticipantsResponse struct {
	Participants []lkParticipant `json:"participants"`
}

type lkParticipantRequest struct {
	Room     string `json:"room"`
	Identity string `json:"identity"`
}

type lkCreateDispatchRequest struct {
	AgentName string `json:"agent_name"`
	Room      string `json:"room"`
	Metadata  string `json:"metadata"`
}

type lkDispatch struct {
	ID        string `json:"id"`
	AgentName string `json:"agent_name"`
	Room      string `json:"room"`
}

type lkCreateSIPParticipantRequest struct {
	SIPTrunkID          string `json:"sip_trunk_id"`
	SIPCallTo           string `json:"sip_call_to"`
	SIPNumber           string `json:"sip_number,omitempty"`
	RoomName            string `json:"room_name"`
	ParticipantIdentity string `json:"participant_identity"`
	ParticipantName     string `json:"participant_name,omitempty"`
	WaitUntilAnswered   bool   `json:"wait_until_answered"`
	RingingTimeout      string `json:"ringing_timeout,omitempty"` // protobuf Duration JSON, "30s"
}

type lkSIPParticipant struct {
	ParticipantID       string `json:"participant_id"`
	ParticipantIdentity string `json:"participant_identity"`
	RoomName            string `json:"room_name"`
	SIPCallID           string `json:"sip_call_id"`
}

type lkListOutboundTrunkRequest struct {
	TrunkIDs []string `json:"trunk_ids,omitempty"`
}

type lkOutboundTrunk struct {
	SIPTrunkID string   `json:"sip_trunk_id"`
	Name       string   `json:"name"`
	Address    string   `json:"address"`
	Numbers    []string `json:"numbers"`
}

type lkListOutboundTrunkResponse struct {
	Items []*lkOutboundTrunk `json:"items"`
}

// Grants per request kind: each token carries only what its endpoint needs.

func grantRoomCreate() lkClaims { return lkClaims{Video: &lkVideoGrant{RoomCreate: true}} }
func grantRoomList() lkClaims   { return lkClaims{Video: &lkVideoGrant{RoomList: true}} }
func grantRoomAdmin(room string) lkClaims {
	return lkClaims{Video: &lkVideoGrant{RoomAdmin: true, Room: room}}
}
func grantSIPCall() lkClaims  { return lkClaims{SIP: &lkSIPGrant{Call: true}} }
func grantSIPAdmin() lkClaims { return lkClaims{SIP: &lkSIPGrant{Admin: true}} }

type lkTransferSIPParticipantRequest struct {
	ParticipantIdentity string `json:"participant_identity"`
	RoomName            string `json:"room_name"`
	TransferTo          string `json:"transfer_to"`
	PlayDialtone        bool   `json:"play_dialtone"`
}

// grantSIPTransfer is what TransferSIPParticipant needs: admin of the
// caller's room and the right to make SIP calls.
func grantSIPTransfer(room string) lkClaims {
	return lkClaims{Video: &lkVideoGrant{RoomAdmin: true, Room: room}, SIP: &lkSIPGrant{Call: true}}
}
