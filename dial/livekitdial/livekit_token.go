package livekitdial

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// LiveKit access tokens are HS256 JWTs signed with the API secret. They are a
// few lines of crypto/hmac, so no JWT library is pulled in for them.

// lkVideoGrant is the `video` claim of a LiveKit token (field names as in
// livekit/protocol auth.VideoGrant).
type lkVideoGrant struct {
	RoomCreate bool   `json:"roomCreate,omitempty"`
	RoomList   bool   `json:"roomList,omitempty"`
	RoomAdmin  bool   `json:"roomAdmin,omitempty"`
	Room       string `json:"room,omitempty"`
}

// lkSIPGrant is the `sip` claim of a LiveKit token.
type lkSIPGrant struct {
	Admin bool `json:"admin,omitempty"`
	Call  bool `json:"call,omitempty"`
}

// lkClaims holds the registered claims and the LiveKit grants we use.
type lkClaims struct {
	Issuer    string        `json:"iss,omitempty"`
	Subject   string        `json:"sub,omitempty"`
	IssuedAt  int64         `json:"iat,omitempty"`
	NotBefore int64         `json:"nbf,omitempty"`
	ExpiresAt int64         `json:"exp,omitempty"`
	Video     *lkVideoGrant `json:"video,omitempty"`
	SIP       *lkSIPGrant   `json:"sip,omitempty"`
	Sha256    string        `json:"sha256,omitempty"`
}

// lkTokenLeeway is the clock skew tolerated when checking nbf/exp.
const lkTokenLeeway = 30 * time.Second

var lkJWTHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// signLKToken returns a compact HS256 JWT for the claims.
func signLKToken(secret string, c lkClaims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signing := lkJWTHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// errLKToken is the cause behind every token refusal; callers wrap it.
var errLKToken = errors.New("invalid token")

// verifyLKToken checks an HS256 JWT: algorithm, signature, issuer (the API
// key), and the nbf/exp window at now. It returns the claims.
func verifyLKToken(raw, apiKey, secret string, now time.Time) (lkClaims, error) {
	var c lkClaims
	raw = strings.TrimSpace(raw)
	if len(raw) > 7 && strings.EqualFold(raw[:7], "bearer ") {
		raw = strings.TrimSpace(raw[7:])
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return c, fmt.Errorf("%w: not a JWT", errLKToken)
	}
	hdrJSON, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return c, fmt.Errorf("%w: header encoding", errLKToken)
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hdrJSON, &hdr); err != nil || hdr.Alg != "HS256" {
		return c, fmt.Errorf("%w: algorithm must be HS256", errLKToken)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return c, fmt.Errorf("%w: signature encoding", errLKToken)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if subtle.ConstantTimeCompare(sig, mac.Sum(nil)) != 1 {
		return c, fmt.Errorf("%w: bad signature", errLKToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, fmt.Errorf("%w: payload encoding", errLKToken)
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, fmt.Errorf("%w: payload: %v", errLKToken, err)
	}
	if subtle.ConstantTimeCompare([]byte(c.Issuer), []byte(apiKey)) != 1 {
		return c, fmt.Errorf("%w: unknown issuer", errLKToken)
	}
	if c.ExpiresAt == 0 {
		return c, fmt.Errorf("%w: no expiry", errLKToken)
	}
	if now.After(time.Unix(c.ExpiresAt, 0).Add(lkTokenLeeway)) {
		return c, fmt.Errorf("%w: expired", errLKToken)
	}
	if c.NotBefore != 0 && now.Add(lkTokenLeeway).Before(time.Unix(c.NotBefore, 0)) {
		return c, fmt.Errorf("%w: not valid yet", errLKToken)
	}
	return c, nil
}
