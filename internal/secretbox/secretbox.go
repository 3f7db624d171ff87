// Package secretbox encrypts the secrets agentd must keep readable (webhook
// signing secrets; the tool-signing secret) with AES-256-GCM from the
// standard library, under a key kept outside the database: in
// AGENTD_SECRET_KEY, or for SQLite in a 0600 file beside the database
// (made on first use). A copy of the database alone reveals no secret.
//
// A sealed value is "sb1:" + the key's id (8 hex digits of its SHA-256) +
// ":" + base64url(nonce || ciphertext). A value without the prefix is a
// secret written before encryption and is returned as is, so old rows keep
// working until a rotation re-seals them. A Box holds one key that seals
// and any number that only open, which is how a rotation interrupted
// between the database and the key file still opens every row.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

const prefix = "sb1:"

// Box seals with its first key and opens with any of its keys.
type Box struct {
	seal string // id of the sealing key
	keys map[string]cipher.AEAD
}

// New makes a box that seals with key and also opens values sealed with
// any of older.
func New(key []byte, older ...[]byte) (*Box, error) {
	b := &Box{keys: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{key}, older...) {
		if len(k) != KeySize {
			return nil, fmt.Errorf("secretbox: a key is %d bytes, not %d", KeySize, len(k))
		}
		blk, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		gcm, err := cipher.NewGCM(blk)
		if err != nil {
			return nil, err
		}
		id := KeyID(k)
		if i == 0 {
			b.seal = id
		}
		if _, ok := b.keys[id]; !ok {
			b.keys[id] = gcm
		}
	}
	return b, nil
}

// KeyID names a key without revealing it.
func KeyID(key []byte) string {
	h := sha256.Sum256(key)
	return hex.EncodeToString(h[:4])
}

// NewKey is a fresh random key.
func NewKey() []byte {
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

// Seal encrypts a secret; "" stays "" (no secret).
func (b *Box) Seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	gcm := b.keys[b.seal]
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	out := gcm.Seal(nonce, nonce, []byte(plain), []byte(b.seal))
	return prefix + b.seal + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// ErrUnknownKey is an encrypted value whose key the box does not hold.
var ErrUnknownKey = errors.New("secretbox: the value was sealed with another key (set AGENTD_SECRET_KEY or restore the key file)")

// Open decrypts a sealed value; a value that was never sealed is returned
// unchanged.
func (b *Box) Open(v string) (string, error) {
	if !Sealed(v) {
		return v, nil
	}
	id, data, ok := strings.Cut(v[len(prefix):], ":")
	if !ok {
		return "", errors.New("secretbox: malformed value")
	}
	gcm := b.keys[id]
	if gcm == nil {
		return "", ErrUnknownKey
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < gcm.NonceSize() {
		return "", errors.New("secretbox: malformed value")
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(id))
	if err != nil {
		return "", errors.New("secretbox: the value does not open (damaged, or another key with the same id)")
	}
	return string(plain), nil
}

// Sealed reports whether v is a sealed value (not a plain-text secret).
func Sealed(v string) bool { return strings.HasPrefix(v, prefix) }

// SealsWith reports whether v is sealed with the box's sealing key (a
// rotation re-seals the rest).
func (b *Box) SealsWith(v string) bool { return strings.HasPrefix(v, prefix+b.seal+":") }
