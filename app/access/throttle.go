package access

import (
	"context"
	"fmt"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
)

// Sign-in throttling (issue 27 items 1 and 2). Every attempt is recorded
// before its password is hashed, in the same transaction that decides it,
// so parallel attempts count against each other. Attempts are counted per
// email-and-address pair, the one scope an attacker cannot share with the
// victim: after a few failures each further try waits twice as long as the
// last, up to 15 minutes. The address alone gets a much larger allowance
// (every user behind a proxy shares it) with a short growing wait. There
// is no per-email block: failures from elsewhere never lock the owner of
// the email out, they only slow whoever makes them.
const (
	ThrottleWindow = 15 * time.Minute
	PairFree       = 5   // failures of one email from one address before waits begin
	AddrFree       = 100 // attempts from one address (any emails) before waits begin
	pairMaxWait    = 15 * time.Minute
	addrMaxWait    = time.Minute
)

// throttled refuses an attempt made too soon, saying when to try again.
func throttled(wait time.Duration) *errs.Error {
	s := int((wait + time.Second - 1) / time.Second)
	return errs.New(errs.RateLimited, fmt.Sprintf("too many failed sign-ins; try again in %d seconds", s))
}

// ErrThrottled is the shape of the refusal (the example in the API docs).
var ErrThrottled = throttled(2 * time.Second)

// backoff is the wait after n attempts when free are allowed without one:
// 1 s after the first over, doubling, at most max; every `per` attempts
// over the allowance double it once.
func backoff(n, free, per int, max time.Duration) time.Duration {
	if n < free {
		return 0
	}
	steps := (n - free) / per
	if steps > 20 {
		return max
	}
	return min(time.Second<<steps, max)
}

// throttleScopes are the scopes of a sign-in: the pair, then the address.
func throttleScopes(email, addr string) []string {
	return []string{"pair:" + email + "|" + addr, "addr:" + addr}
}

// admitLogin records an attempt before any hashing, or refuses it with how
// long to wait.
func (db *Service) admitLogin(ctx context.Context, scopes []string, now time.Time) error {
	wait, err := db.orgs.AdmitLogin(ctx, now, now.Add(-ThrottleWindow), scopes, func(seen []orgstore.LoginAttempts) time.Duration {
		pair := seen[0].Last.Add(backoff(seen[0].N, PairFree, 1, pairMaxWait)).Sub(now)
		addr := seen[1].Last.Add(backoff(seen[1].N, AddrFree, 10, addrMaxWait)).Sub(now)
		if seen[0].N < PairFree {
			pair = 0
		}
		if seen[1].N < AddrFree {
			addr = 0
		}
		return max(pair, addr, 0)
	})
	if err != nil {
		return err
	}
	if wait > 0 {
		return throttled(wait)
	}
	return nil
}

// Password hashes run a few at a time: each argon2id takes 19 MiB, so a
// flood of sign-ins would otherwise take memory by the gigabyte. Excess
// attempts wait for a slot while at most maxHashQueue are waiting; beyond
// that they are refused with 429 at once.
const (
	maxHashes    = 2
	maxHashQueue = 32
	hashWaitMax  = 10 * time.Second
)

var (
	hashSlots = make(chan struct{}, maxHashes)
	hashQueue = make(chan struct{}, maxHashes+maxHashQueue)
)

var errBusy = errs.New(errs.RateLimited, "too many sign-ins at once; try again in a few seconds")

// withHashSlot runs fn (which hashes) once a slot is free.
func withHashSlot(ctx context.Context, fn func()) error {
	select {
	case hashQueue <- struct{}{}:
	default:
		return errBusy
	}
	defer func() { <-hashQueue }()
	t := time.NewTimer(hashWaitMax)
	defer t.Stop()
	select {
	case hashSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errBusy
	}
	defer func() { <-hashSlots }()
	fn()
	return nil
}
