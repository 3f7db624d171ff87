package access

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/agentd/agentd/internal/errs"
)

// argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes, one
// lane) keeps a sign-in near 30 ms on a small VM while making offline
// guessing costly. They are stored with each hash, so raising them later
// only affects new passwords.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
)

// Password length limits: long enough to resist guessing, short enough that
// hashing a request body cannot be used to burn CPU.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 256
)

// ValidPassword checks a new password's length.
func ValidPassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen || len(pw) > MaxPasswordLen {
		return errs.InvalidField("password", fmt.Sprintf("must be %d to %d characters", MinPasswordLen, MaxPasswordLen))
	}
	return nil
}

// HashPassword hashes a password with argon2id and a random salt, in the
// PHC string format ($argon2id$v=19$m=...,t=...,p=...$salt$hash).
func HashPassword(pw string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// VerifyPassword reports whether pw matches an encoded hash; a malformed
// hash never matches.
func VerifyPassword(encoded, pw string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || len(pw) > MaxPasswordLen {
		return false
	}
	var v int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 10 || p == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	sum, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(sum) == 0 || len(sum) > 64 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(sum)))
	return subtle.ConstantTimeCompare(got, sum) == 1
}

// dummyHash is verified against when an email has no password, so a wrong
// email takes as long as a wrong password.
var dummyHash = sync.OnceValue(func() string { return HashPassword("agentd-dummy-password") })
