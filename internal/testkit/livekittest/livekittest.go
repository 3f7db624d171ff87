// Package livekittest is a fake LiveKit server for tests: the Twirp API the
// LiveKit dialer calls, and webhooks signed as livekit-server signs them.
// The dialer's tests (dial) and the HTTP tests (app) share it. It is
// imported by tests only.
package livekittest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Key and Secret are the API key pair the fake accepts.
const (
	Key    = "APIfaketestkey"
	Secret = "fake-secret-0123456789-abcdefghijklmnop"
	// TrunkID is the one SIP outbound trunk the fake has.
	TrunkID = "ST_test"
)

// Server stands in for livekit-server. It checks every request's token
// (HS256 signature, issuer, nbf/exp, exactly the grants the endpoint
// needs), records the requests, keeps rooms and participants, and lets a
// test choose how CreateSIPParticipant answers. Problems found fail the
// test when it ends.
type Server struct {
	// HTTP is the test server; URL is where the dialer should point.
	HTTP *httptest.Server
	URL  string

	// SIP answers CreateSIPParticipant: HTTP status and body (see
	// TwirpError); status 0 answers success. It may block on r.Context()
	// to play a ringing phone. Set it before the first call.
	SIP func(r *http.Request, req map[string]any) (int, string)
	// Transfer answers TransferSIPParticipant as SIP does (status 0:
	// the target took the call, and the participant leaves its room).
	Transfer func(req map[string]any) (int, string)

	mu       sync.Mutex
	calls    []Call
	rooms    map[string]map[string]bool // room -> participant identities
	problems []string
}

// Call is one request the fake received.
type Call struct {
	Method string // e.g. "RoomService/CreateRoom"
	Room   string // the room the request names, "" when none
	Body   []byte
}

// New starts a fake server, closed when the test ends.
func New(t testing.TB) *Server {
	f := &Server{rooms: map[string]map[string]bool{}}
	f.HTTP = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.HTTP.URL
	t.Cleanup(func() {
		f.HTTP.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.problems {
			t.Errorf("fake livekit: %s", p)
		}
	})
	return f
}

func (f *Server) problem(format string, args ...any) {
	f.mu.Lock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

// wantGrant lists, per method, the grants its token must carry and nothing more.
func wantGrant(method string, body map[string]any) string {
	room, _ := body["room"].(string)
	switch method {
	case "RoomService/CreateRoom", "RoomService/DeleteRoom":
		return `{"video":{"roomCreate":true}}`
	case "RoomService/ListRooms":
		return `{"video":{"roomList":true}}`
	case "RoomService/ListParticipants", "RoomService/RemoveParticipant", "AgentDispatchService/CreateDispatch":
		return fmt.Sprintf(`{"video":{"roomAdmin":true,"room":%q}}`, room)
	case "SIP/CreateSIPParticipant":
		return `{"sip":{"call":true}}`
	case "SIP/ListSIPOutboundTrunk":
		return `{"sip":{"admin":true}}`
	case "SIP/TransferSIPParticipant":
		rn, _ := body["room_name"].(string)
		return fmt.Sprintf(`{"video":{"roomAdmin":true,"room":%q},"sip":{"call":true}}`, rn)
	}
	return "unknown method"
}

// checkToken verifies the bearer token independently of the dialer's code
// and returns its grants (video and sip claims) as canonical JSON.
func checkToken(auth string) (string, error) {
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return "", fmt.Errorf("no bearer token")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("token has %d parts", len(parts))
	}
	var hdr map[string]any
	if err := decodeSeg(parts[0], &hdr); err != nil || hdr["alg"] != "HS256" {
		return "", fmt.Errorf("header %v %v", hdr, err)
	}
	mac := hmac.New(sha256.New, []byte(Secret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) != parts[2] {
		return "", fmt.Errorf("bad signature")
	}
	var c map[string]json.RawMessage
	if err := decodeSeg(parts[1], &c); err != nil {
		return "", err
	}
	var iss string
	var nbf, exp int64
	json.Unmarshal(c["iss"], &iss)
	json.Unmarshal(c["nbf"], &nbf)
	json.Unmarshal(c["exp"], &exp)
	now := time.Now().Unix()
	if iss != Key {
		return "", fmt.Errorf("iss %q", iss)
	}
	if nbf > now+1 || exp < now || exp > now+10*60 {
		return "", fmt.Errorf("validity nbf=%d exp=%d now=%d (want short-lived)", nbf, exp, now)
	}
	grants := map[string]any{}
	for _, k := range []string{"video", "sip"} {
		if v, ok := c[k]; ok {
			var g any
			json.Unmarshal(v, &g)
			grants[k] = g
		}
	}
	out, _ := json.Marshal(grants)
	return string(out), nil
}

func decodeSeg(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func canonJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "invalid JSON: " + s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TwirpError is a Twirp error response: its HTTP status and JSON body.
func TwirpError(status int, code, msg string, meta map[string]string) (int, string) {
	b, _ := json.Marshal(map[string]any{"code": code, "msg": msg, "meta": meta})
	return status, string(b)
}

// requestRoom is the room a request names, whatever the method calls it.
func requestRoom(body map[string]any) string {
	for _, k := range []string{"room", "room_name", "name"} {
		if s, _ := body[k].(string); s != "" {
			return s
		}
	}
	return ""
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/twirp/livekit.")
	if r.Method != http.MethodPost || !ok || r.Header.Get("Content-Type") != "application/json" {
		f.problem("bad request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		http.Error(w, "bad route", http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.problem("%s: body %q: %v", method, raw, err)
	}
	grants, err := checkToken(r.Header.Get("Authorization"))
	if err != nil {
		f.problem("%s: token: %v", method, err)
		writeErr(w, 401, "unauthenticated", err.Error())
		return
	}
	if want := canonJSON(wantGrant(method, body)); grants != want {
		f.problem("%s: grants %s, want %s", method, grants, want)
		writeErr(w, 403, "permission_denied", "permissions denied")
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, Call{Method: method, Room: requestRoom(body), Body: raw})
	f.mu.Unlock()

	room, _ := body["room"].(string)
	switch method {
	case "RoomService/CreateRoom":
		name, _ := body["name"].(string)
		f.mu.Lock()
		f.rooms[name] = map[string]bool{}
		f.mu.Unlock()
		writeJSON(w, map[string]any{"sid": "RM_" + name, "name": name, "empty_timeout": body["empty_timeout"], "num_participants": 0, "metadata": body["metadata"]})
	case "AgentDispatchService/CreateDispatch":
		writeJSON(w, map[string]any{"id": "AD_" + room, "agent_name": body["agent_name"], "room": room, "metadata": body["metadata"]})
	case "SIP/CreateSIPParticipant":
		if f.SIP != nil {
			if st, b := f.SIP(r, body); st != 0 {
				writeRaw(w, st, b)
				return
			}
		}
		rn, _ := body["room_name"].(string)
		id, _ := body["participant_identity"].(string)
		f.mu.Lock()
		if f.rooms[rn] != nil {
			f.rooms[rn][id] = true
		}
		f.mu.Unlock()
		writeJSON(w, map[string]any{"participant_id": "PA_" + id, "participant_identity": id, "room_name": rn, "sip_call_id": "SCL_test"})
	case "RoomService/ListRooms":
		names, _ := body["names"].([]any)
		rooms := []any{}
		f.mu.Lock()
		for _, n := range names {
			if s, _ := n.(string); f.rooms[s] != nil {
				rooms = append(rooms, map[string]any{"sid": "RM_" + s, "name": s, "num_participants": len(f.rooms[s])})
			}
		}
		f.mu.Unlock()
		writeJSON(w, map[string]any{"rooms": rooms})
	case "RoomService/ListParticipants":
		ps := []any{}
		f.mu.Lock()
		for id := range f.rooms[room] {
			ps = append(ps, map[string]any{"sid": "PA_" + id, "identity": id, "state": "ACTIVE", "kind": "SIP"})
		}
		f.mu.Unlock()
		writeJSON(w, map[string]any{"participants": ps})
	case "RoomService/RemoveParticipant":
		id, _ := body["identity"].(string)
		f.mu.Lock()
		found := f.rooms[room][id]
		delete(f.rooms[room], id)
		f.mu.Unlock()
		if !found {
			writeErr(w, 404, "not_found", "participant does not exist")
			return
		}
		writeJSON(w, map[string]any{})
	case "RoomService/DeleteRoom":
		f.mu.Lock()
		found := f.rooms[room] != nil
		delete(f.rooms, room)
		f.mu.Unlock()
		if !found {
			writeErr(w, 404, "not_found", "requested room does not exist")
			return
		}
		writeJSON(w, map[string]any{})
	case "SIP/TransferSIPParticipant":
		if f.Transfer != nil {
			if st, b := f.Transfer(body); st != 0 {
				writeRaw(w, st, b)
				return
			}
		}
		rn, _ := body["room_name"].(string)
		id, _ := body["participant_identity"].(string)
		f.mu.Lock()
		found := f.rooms[rn][id]
		delete(f.rooms[rn], id)
		f.mu.Unlock()
		if !found {
			writeErr(w, 404, "not_found", "participant does not exist")
			return
		}
		writeJSON(w, map[string]any{})
	case "SIP/ListSIPOutboundTrunk":
		writeJSON(w, map[string]any{"items": []any{map[string]any{"sip_trunk_id": TrunkID, "name": "test", "address": "sip.example.test", "numbers": []string{"+15550000000"}}}})
	default:
		f.problem("unexpected method %s", method)
		writeErr(w, 404, "bad_route", "no handler")
	}
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	st, b := TwirpError(status, code, msg, nil)
	writeRaw(w, st, b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	writeRaw(w, 200, string(b))
}

func writeRaw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// Methods lists the methods called so far, in order.
func (f *Server) Methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Method)
	}
	return out
}

// Body returns the first recorded body of method (nil if never called).
func (f *Server) Body(method string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.Method == method {
			return c.Body
		}
	}
	return nil
}

// Called reports whether method was called.
func (f *Server) Called(method string) bool { return f.Body(method) != nil }

// CalledFor reports whether method was called for room.
func (f *Server) CalledFor(method, room string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.Method == method && c.Room == room {
			return true
		}
	}
	return false
}

// HangUpCallee removes a participant as if the callee hung up (no webhook).
func (f *Server) HangUpCallee(room, identity string) {
	f.mu.Lock()
	delete(f.rooms[room], identity)
	f.mu.Unlock()
}

// DropRoom removes a room as if it ended on the server (no webhook).
func (f *Server) DropRoom(room string) {
	f.mu.Lock()
	delete(f.rooms, room)
	f.mu.Unlock()
}

// SignWebhook signs body as livekit-server does: an HS256 token from key
// with claim sha256 = base64(SHA-256(body)), valid from nbf to exp.
func SignWebhook(key, secret string, body []byte, nbf, exp time.Time) string {
	sum := sha256.Sum256(body)
	claims, _ := json.Marshal(map[string]any{
		"iss": key, "nbf": nbf.Unix(), "exp": exp.Unix(), "iat": nbf.Unix(),
		"sha256": base64.StdEncoding.EncodeToString(sum[:]),
	})
	seg := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	head := seg([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + seg(claims)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(head))
	return head + "." + seg(mac.Sum(nil))
}

// WebhookBody is a webhook event as livekit-server's protojson writes it;
// identity, when set, adds the participant the event is about.
func WebhookBody(id, event, room, identity string, created time.Time) []byte {
	ev := map[string]any{
		"event": event, "id": id, "createdAt": fmt.Sprint(created.Unix()),
		"room": map[string]any{"sid": "RM_" + room, "name": room, "emptyTimeout": 120,
			"creationTime": "1700000000", "numParticipants": 1},
	}
	if identity != "" {
		ev["participant"] = map[string]any{"sid": "PA_" + identity, "identity": identity, "state": "DISCONNECTED", "kind": "SIP"}
	}
	b, _ := json.Marshal(ev)
	return b
}
