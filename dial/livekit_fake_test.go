package dial

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

// fakeLiveKit is a Twirp test server standing in for livekit-server. It checks
// every request's token (HS256 signature, issuer, nbf/exp, grants for the
// endpoint), records the bodies, keeps rooms and participants, and lets a
// test choose how CreateSIPParticipant answers.
type fakeLiveKit struct {
	t      *testing.T
	key    string
	secret string
	srv    *httptest.Server

	mu       sync.Mutex
	calls    []fakeCall
	rooms    map[string]map[string]bool // room -> participant identities
	problems []string

	// sip answers CreateSIPParticipant: HTTP status and body. Nil answers
	// success. It may block on r.Context() to play a ringing phone.
	sip func(r *http.Request, req map[string]any) (int, string)
}

type fakeCall struct {
	Method string
	Body   []byte
}

const fakeKey, fakeSecret = "APIfaketestkey", "fake-secret-0123456789-abcdefghijklmnop"

func newFakeLiveKit(t *testing.T) *fakeLiveKit {
	f := &fakeLiveKit{t: t, key: fakeKey, secret: fakeSecret, rooms: map[string]map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.problems {
			t.Errorf("fake livekit: %s", p)
		}
	})
	return f
}

func (f *fakeLiveKit) problem(format string, args ...any) {
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
	}
	return "unknown method"
}

// checkToken verifies the bearer token independently of the dialer's code and
// returns its grants (video and sip claims) as canonical JSON.
func (f *fakeLiveKit) checkToken(auth string) (string, error) {
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
	mac := hmac.New(sha256.New, []byte(f.secret))
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
	if iss != f.key {
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

func twirpErr(status int, code, msg string, meta map[string]string) (int, string) {
	b, _ := json.Marshal(map[string]any{"code": code, "msg": msg, "meta": meta})
	return status, string(b)
}

func (f *fakeLiveKit) serve(w http.ResponseWriter, r *http.Request) {
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
	grants, err := f.checkToken(r.Header.Get("Authorization"))
	if err != nil {
		f.problem("%s: token: %v", method, err)
		st, b := twirpErr(401, "unauthenticated", err.Error(), nil)
		writeRaw(w, st, b)
		return
	}
	if want := canonJSON(wantGrant(method, body)); grants != want {
		f.problem("%s: grants %s, want %s", method, grants, want)
		st, b := twirpErr(403, "permission_denied", "permissions denied", nil)
		writeRaw(w, st, b)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{Method: method, Body: raw})
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
		if f.sip != nil {
			if st, b := f.sip(r, body); st != 0 {
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
	case "SIP/ListSIPOutboundTrunk":
		writeJSON(w, map[string]any{"items": []any{map[string]any{"sip_trunk_id": "ST_test", "name": "test", "address": "sip.example.test", "numbers": []string{"+15550000000"}}}})
	default:
		f.problem("unexpected method %s", method)
		writeErr(w, 404, "bad_route", "no handler")
	}
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	st, b := twirpErr(status, code, msg, nil)
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

// methods lists the methods called so far, in order.
func (f *fakeLiveKit) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Method)
	}
	return out
}

// body returns the first recorded body of method.
func (f *fakeLiveKit) body(method string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.Method == method {
			return c.Body
		}
	}
	return nil
}

func (f *fakeLiveKit) called(method string) bool { return f.body(method) != nil }

// hangUpCallee removes a participant as if the callee hung up (no webhook).
func (f *fakeLiveKit) hangUpCallee(room, identity string) {
	f.mu.Lock()
	delete(f.rooms[room], identity)
	f.mu.Unlock()
}

// signWebhook signs body as livekit-server does: an HS256 token from key with
// claim sha256 = base64(SHA-256(body)), valid from nbf to exp.
func signWebhook(t *testing.T, key, secret string, body []byte, nbf, exp time.Time) string {
	t.Helper()
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

// webhookBody is a webhook event as livekit-server's protojson writes it.
func webhookBody(id, event, room, identity string) []byte {
	ev := map[string]any{
		"event": event, "id": id, "createdAt": fmt.Sprint(time.Now().Unix()),
		"room": map[string]any{"sid": "RM_" + room, "name": room, "emptyTimeout": 120, "creationTime": "1700000000"},
	}
	if identity != "" {
		ev["participant"] = map[string]any{"sid": "PA_" + identity, "identity": identity, "state": "DISCONNECTED", "kind": "SIP"}
	}
	b, _ := json.Marshal(ev)
	return b
}
