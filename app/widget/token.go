package widget

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/errs"
)

// Claims are what a visitor token vouches for: one conversation of one
// agent of one organization, until Expires; renewals keep First, so a
// session ends MaxVisitorLifetime after it began.
type Claims struct {
	OrgID          string `json:"o"`
	AgentID        string `json:"a"`
	ConversationID string `json:"c"`
	Expires        int64  `json:"e"` // unix seconds
	First          int64  `json:"i"` // unix seconds: when the session's first token was issued
}

var b64 = base64.RawURLEncoding

// sign makes the token: base64url(JSON claims) "." base64url(HMAC-SHA256).
func sign(secret []byte, c Claims) string {
	body, _ := json.Marshal(c)
	p := b64.EncodeToString(body)
	return p + "." + b64.EncodeToString(mac(secret, p))
}

func mac(secret []byte, payload string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(payload))
	return h.Sum(nil)
}

var errToken = errs.New(errs.Unauthenticated, "visitor token is invalid or expired; start a new session")

// verify checks the signature first, then the expiry and the session's
// maximum lifetime; a token signed with a rotated-out secret is as invalid
// as a forged one, and so is one without First (issued before sessions
// had a lifetime: its visitor starts over).
func verify(secret []byte, token string, now time.Time) (Claims, error) {
	p, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > maxToken {
		return Claims{}, errToken
	}
	// Strict: one signature, one spelling (a lenient decoder ignores the
	// last character's spare bits, so four spellings would verify).
	got, err := b64.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, p)) {
		return Claims{}, errToken
	}
	body, err := b64.Strict().DecodeString(p)
	if err != nil {
		return Claims{}, errToken
	}
	var c Claims
	if err := json.Unmarshal(body, &c); err != nil || c.ConversationID == "" || c.AgentID == "" || c.OrgID == "" {
		return Claims{}, errToken
	}
	if now.Unix() >= c.Expires || c.First <= 0 || now.Unix() >= c.First+int64(MaxVisitorLifetime/time.Second) {
		return Claims{}, errToken
	}
	return c, nil
}
