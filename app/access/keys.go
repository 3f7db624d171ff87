package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Key format: "agd_" + 40 base62 characters.
const (
	KeyPrefix        = "agd_"
	KeyRandLen       = 40
	KeyLen           = len(KeyPrefix) + KeyRandLen
	base62           = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	DefaultRateLimit = 1000
	KeyTTL           = 30 * 24 * time.Hour
)

// NewKeySecret makes a fresh key, its SHA-256 and its display prefix.
func NewKeySecret() (key string, hash []byte, display string) {
	b := make([]byte, 0, KeyLen)
	b = append(b, KeyPrefix...)
	var buf [64]byte
	for len(b) < KeyLen {
		rand.Read(buf[:])
		for _, c := range buf {
			if c < 248 && len(b) < KeyLen { // 248 = 4*62: no modulo bias
				b = append(b, base62[c%62])
			}
		}
	}
	key = string(b)
	h := sha256.Sum256(b)
	return key, h[:], key[:len(KeyPrefix)+6]
}

// WellFormedKey reports whether s has the shape of one of our keys, so
// garbage is refused without a database lookup.
func WellFormedKey(s string) bool {
	if len(s) != KeyLen || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// KeyOptions are the settings of a new API key.
type KeyOptions struct {
	Name          string
	ExpiresInDays *int // nil: 30 days
	Never         bool // no expiry
	RateLimit     int  // requests per minute; 0: 1000
}

// MaxRateLimit bounds the per-key window so a key's log stays small.
const MaxRateLimit = 100000

// NewKey validates the options and makes the key: the row to store and the
// secret to show once.
func (o KeyOptions) NewKey(orgID, userID string) (orgstore.NewKey, string, error) {
	if len(o.Name) > 100 {
		return orgstore.NewKey{}, "", errs.New(errs.Invalid, "name: at most 100 characters")
	}
	if o.RateLimit < 0 || o.RateLimit > MaxRateLimit {
		return orgstore.NewKey{}, "", errs.Invalidf("rateLimitPerMinute: must be 1 to %d", MaxRateLimit)
	}
	limit := o.RateLimit
	if limit == 0 {
		limit = DefaultRateLimit
	}
	var exp *time.Time
	if !o.Never {
		ttl := KeyTTL
		if o.ExpiresInDays != nil {
			d := *o.ExpiresInDays
			if d < 1 || d > 3650 {
				return orgstore.NewKey{}, "", errs.New(errs.Invalid, "expiresInDays: must be 1 to 3650, or null for a key that never expires")
			}
			ttl = time.Duration(d) * 24 * time.Hour
		}
		t := time.Now().UTC().Add(ttl)
		exp = &t
	}
	name := o.Name
	if name == "" {
		name = "default"
	}
	key, hash, display := NewKeySecret()
	return orgstore.NewKey{OrgID: orgID, UserID: userID, Name: name, Prefix: display, Hash: hash,
		RateLimit: limit, ExpiresAt: exp}, key, nil
}

// CreateKey creates a key for a user of an organization and returns the
// secret, which is never stored and never shown again.
func (db *Service) CreateKey(ctx context.Context, orgID, userID string, o KeyOptions) (string, orgstore.APIKey, error) {
	nk, secret, err := o.NewKey(orgID, userID)
	if err != nil {
		return "", orgstore.APIKey{}, err
	}
	k, err := db.orgs.CreateKey(ctx, nk)
	return secret, k, err
}

// CreateOrg creates an organization with its owner and the owner's key.
func (db *Service) CreateOrg(ctx context.Context, name, ownerEmail string) (orgstore.Org, string, orgstore.APIKey, error) {
	if err := validOrgName(name); err != nil {
		return orgstore.Org{}, "", orgstore.APIKey{}, err
	}
	if err := ValidEmail(ownerEmail); err != nil {
		return orgstore.Org{}, "", orgstore.APIKey{}, err
	}
	nk, secret, err := KeyOptions{Name: "owner"}.NewKey("", "")
	if err != nil {
		return orgstore.Org{}, "", orgstore.APIKey{}, err
	}
	o, _, k, err := db.orgs.CreateOrgWithOwner(ctx, name, ownerEmail, nk)
	return o, secret, k, err
}

// Bootstrap creates organization "default" with owner owner@localhost on an
// empty database and returns the owner key; created is false otherwise.
func (db *Service) Bootstrap(ctx context.Context) (key string, created bool, err error) {
	key, _, created, err = db.BootstrapOwner(ctx)
	return key, created, err
}

// BootstrapOwner is Bootstrap that also returns when the owner key expires
// (KeyTTL from now), which the first start prints beside the key.
func (db *Service) BootstrapOwner(ctx context.Context) (key string, expires time.Time, created bool, err error) {
	nk, secret, err := KeyOptions{Name: "owner"}.NewKey("", "")
	if err != nil {
		return "", time.Time{}, false, err
	}
	created, err = db.orgs.Bootstrap(ctx, "default", "owner@localhost", nk)
	if !created || err != nil {
		return "", time.Time{}, false, err
	}
	return secret, *nk.ExpiresAt, true, nil
}

func validOrgName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 100 {
		return errs.New(errs.Invalid, "organization name: 1 to 100 characters")
	}
	return nil
}

// ValidEmail checks a user email.
func ValidEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return errs.Invalidf("email %q: not a valid address", email)
	}
	return nil
}

// KeyStatus is active, revoked or expired at now.
func KeyStatus(k orgstore.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	}
	return "active"
}

// RevokeKey revokes a key of the organization for a member who may manage
// keys. Like the member rules, only an owner touches an owner: an owner's
// key is refused to anyone else (Forbidden), changing nothing.
func (db *Service) RevokeKey(ctx context.Context, a Actor, orgID, keyID string) error {
	err := db.orgs.RevokeKeyAs(ctx, orgID, keyID, a.Role == "owner")
	switch {
	case errors.Is(err, orgstore.ErrOwnerKey):
		return errs.New(errs.Forbidden, "only an owner may revoke an owner's key")
	case errors.Is(err, sqldb.ErrNotFound):
		return errs.Wrap(errs.NotFound, "API key not found", err)
	}
	return err
}

// Keys lists the organization's API keys (the dashboard's keys page).
func (db *Service) Keys(ctx context.Context, orgID string) ([]orgstore.APIKey, error) {
	return db.orgs.ListKeys(ctx, orgID)
}
