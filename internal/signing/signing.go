// Package signing is Standard Webhooks signing: the secrets and the
// webhook-signature header that webhook deliveries (app/events) and url
// tool calls (app/conversations) carry.
package signing

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// NewSecret is a fresh signing secret: whsec_ + base64 of 32 random bytes.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// secretKey is the HMAC key of a secret: the base64-decoded part after
// whsec_ (nil when malformed, which never signs).
func secretKey(secret string) []byte {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return nil
	}
	return k
}

// Sign is the webhook-signature header value for one delivery: "v1,<base64
// HMAC-SHA256 of id.timestamp.body>" for each secret, space-separated (the
// new secret first during a rotation).
func Sign(id string, ts time.Time, body []byte, secrets ...string) string {
	var b strings.Builder
	prefix := id + "." + strconv.FormatInt(ts.Unix(), 10) + "."
	for _, s := range secrets {
		key := secretKey(s)
		if key == nil {
			continue
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(prefix))
		m.Write(body)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return b.String()
}
