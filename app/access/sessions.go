package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Session lifetimes (issue 12): a session ends after 12 hours without a
// request or 7 days after sign-in, whichever comes first.
const (
	IdleTimeout     = 12 * time.Hour
	AbsoluteTimeout = 7 * 24 * time.Hour
	SetupTokenTTL   = time.Hour
	// touchEvery bounds session writes: activity is recorded at most once a
	// minute per session, which is all the idle timeout needs.
	touchEvery = time.Minute
)

// ErrBadLogin is the one answer to a wrong email or a wrong password: it
// never says which was wrong.
var ErrBadLogin = errs.New(errs.Unauthenticated, "invalid email or password")

var errNoSession = errs.New(errs.Unauthenticated, "session expired or signed out: sign in again")

// Started is a new session: Token goes into the cookie and is never stored;
// CSRF must accompany every state-changing request of the session.
type Started struct {
	Token   string
	Session orgstore.Session
}

// newToken is 256 random bits, URL-safe, and its SHA-256 (what is stored).
func newToken() (string, []byte) {
	b := make([]byte, 32)
	rand.Read(b)
	t := base64.RawURLEncoding.EncodeToString(b)
	return t, hashToken(t)
}

func hashToken(t string) []byte {
	h := sha256.Sum256([]byte(t))
	return h[:]
}

// Login checks an email and password, throttled per email-and-address pair
// and per address (throttle.go), and starts a session. The attempt is
// recorded before any hashing and forgotten if it succeeds; hashes wait for
// one of a few slots. With several organizations sharing the email, org (a
// name or id) picks one; otherwise the oldest membership whose password
// matches is used.
func (db *Service) Login(ctx context.Context, email, password, org, clientAddr string, now time.Time) (Started, error) {
	email = strings.TrimSpace(email)
	scopes := throttleScopes(strings.ToLower(email), clientAddr)
	if err := db.admitLogin(ctx, scopes, now); err != nil {
		return Started{}, err
	}
	users, err := db.orgs.UsersByEmail(ctx, email)
	if err != nil {
		return Started{}, err
	}
	var match *orgstore.UserLogin
	err = withHashSlot(ctx, func() {
		checked := false
		for i := range users {
			u := &users[i]
			if u.PasswordHash == "" || org != "" && org != u.OrgID && org != u.OrgName {
				continue
			}
			checked = true
			if VerifyPassword(u.PasswordHash, password) {
				match = u
				break
			}
		}
		if !checked {
			VerifyPassword(dummyHash(), password) // same time as a wrong password
		}
	})
	if err != nil {
		return Started{}, err
	}
	if match == nil {
		return Started{}, ErrBadLogin
	}
	if err := db.orgs.ClearLoginFailures(ctx, scopes[0]); err != nil {
		return Started{}, err
	}
	if err := db.orgs.ForgetLoginAttempt(ctx, now, scopes[1]); err != nil {
		return Started{}, err
	}
	return db.startSession(ctx, match.ID, now)
}

func (db *Service) startSession(ctx context.Context, userID string, now time.Time) (Started, error) {
	token, hash := newToken()
	csrf, _ := newToken()
	if err := db.orgs.CreateSession(ctx, hash, userID, csrf, now, now.Add(AbsoluteTimeout)); err != nil {
		return Started{}, err
	}
	s, err := db.orgs.LookupSession(ctx, hash)
	return Started{Token: token, Session: s}, err
}

// Authenticate resolves a session cookie's token at now: unknown, signed
// out, idle for 12 h or older than 7 days is Unauthenticated.
func (db *Service) Authenticate(ctx context.Context, token string, now time.Time) (orgstore.Session, error) {
	if len(token) != 43 {
		return orgstore.Session{}, errNoSession
	}
	hash := hashToken(token)
	s, err := db.orgs.LookupSession(ctx, hash)
	if errors.Is(err, sqldb.ErrNotFound) {
		return orgstore.Session{}, errNoSession
	}
	if err != nil {
		return orgstore.Session{}, err
	}
	if !now.Before(s.ExpiresAt) || now.Sub(s.LastSeenAt) >= IdleTimeout {
		_ = db.orgs.DeleteSession(ctx, hash)
		return orgstore.Session{}, errNoSession
	}
	if now.Sub(s.LastSeenAt) >= touchEvery {
		if err := db.orgs.TouchSession(ctx, hash, now); err != nil {
			return orgstore.Session{}, err
		}
	}
	return s, nil
}

// Logout ends the session of a token.
func (db *Service) Logout(ctx context.Context, token string) error {
	return db.orgs.DeleteSession(ctx, hashToken(token))
}

// LogoutEverywhere ends every session of a user.
func (db *Service) LogoutEverywhere(ctx context.Context, userID string) (int64, error) {
	return db.orgs.DeleteUserSessions(ctx, userID)
}

// NewSetupToken makes a one-time token with which a user sets a password
// (the first-run setup link), valid for an hour.
func (db *Service) NewSetupToken(ctx context.Context, userID string, now time.Time) (string, error) {
	token, hash := newToken()
	return token, db.orgs.CreateSetupToken(ctx, hash, userID, now.Add(SetupTokenTTL))
}

// CompleteSetup consumes a setup token, sets the password and signs in.
func (db *Service) CompleteSetup(ctx context.Context, token, password string, now time.Time) (Started, error) {
	if err := ValidPassword(password); err != nil {
		return Started{}, err
	}
	userID, err := db.orgs.UseSetupToken(ctx, hashToken(token), now, HashPassword(password))
	if errors.Is(err, sqldb.ErrNotFound) {
		return Started{}, errs.New(errs.Unauthenticated, "the setup link is invalid, used or expired: make a password with `agentd user password EMAIL`")
	}
	if err != nil {
		return Started{}, err
	}
	return db.startSession(ctx, userID, now)
}

// SetPassword sets a user's password (the CLI) and signs them out everywhere.
func (db *Service) SetPassword(ctx context.Context, userID, password string) error {
	if err := ValidPassword(password); err != nil {
		return err
	}
	return db.orgs.SetPassword(ctx, userID, HashPassword(password))
}
