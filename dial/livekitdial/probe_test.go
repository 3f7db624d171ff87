package livekitdial

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// probeLiveKit is the smallest LiveKit Twirp stand-in the probe needs: it
// checks the token's HS256 signature with secret and answers ListRooms and
// ListSIPOutboundTrunk.
func probeLiveKit(t *testing.T, secret string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		i := strings.LastIndexByte(tok, '.')
		mac := hmac.New(sha256.New, []byte(secret))
		if i > 0 {
			mac.Write([]byte(tok[:i]))
		}
		if i < 0 || base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) != tok[i+1:] {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"code":"unauthenticated","msg":"invalid token"}`))
			return
		}
		switch r.URL.Path {
		case "/twirp/livekit.RoomService/ListRooms":
			w.Write([]byte(`{"rooms":[{"name":"a"}]}`))
		case "/twirp/livekit.SIP/ListSIPOutboundTrunk":
			w.Write([]byte(`{"items":[{"sip_trunk_id":"ST_probe"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestProbeLiveKit(t *testing.T) {
	url := probeLiveKit(t, "right-secret")
	cfg := LiveKitConfig{URL: url, APIKey: "k", APISecret: "right-secret", OutboundTrunkID: "ST_probe", AgentName: "a"}
	p, err := ProbeLiveKit(t.Context(), cfg)
	if err != nil || p.Rooms != 1 || p.ServerTime.IsZero() || time.Since(p.ServerTime).Abs() > 5*time.Second {
		t.Fatalf("probe: %+v %v", p, err)
	}
	cfg.OutboundTrunkID = "ST_other"
	if _, err := ProbeLiveKit(t.Context(), cfg); err == nil || LiveKitUnauthenticated(err) {
		t.Fatalf("unknown trunk: %v", err)
	}
	cfg.APISecret = "wrong-secret"
	if _, err := ProbeLiveKit(t.Context(), cfg); !LiveKitUnauthenticated(err) {
		t.Fatalf("wrong secret: %v, want unauthenticated", err)
	}
}
