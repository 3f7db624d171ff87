package sipdial

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/emiago/sipgo/sip"
)

// validSIPNumber accepts E.164-like numbers ("+" and 1-20 digits). They go
// into SIP URIs and headers, so nothing else may pass.
func validSIPNumber(n string) bool {
	n = strings.TrimPrefix(n, "+")
	if len(n) == 0 || len(n) > 20 {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// sipFinalResult maps a final non-2xx answer to the INVITE to an outcome.
// A 503 or 403 with Retry-After, or a refusal whose reason says the trunk's
// call limit was hit, is carrier pushback: a *dial.Pushback (a dial.ErrRetryLater)
// re-queues the call without spending an attempt and slows the dial queue.
// A plain 503 fails the attempt.
func sipFinalResult(res *sip.Response) (dial.Result, error) {
	code, reason := res.StatusCode, strings.TrimSpace(res.Reason)
	text := fmt.Sprintf("SIP %d", code)
	if reason != "" {
		text += " " + reason
	}
	if ra := res.GetHeader("Retry-After"); ra != nil && (code == sip.StatusServiceUnavailable || code == sip.StatusForbidden) {
		return dial.Result{}, &dial.Pushback{Reason: fmt.Sprintf("%s (Retry-After %s)", text, ra.Value()), RetryAfter: parseRetryAfter(ra.Value())}
	}
	if code >= 400 && sipLimitReason(reason) {
		return dial.Result{}, &dial.Pushback{Reason: text}
	}
	switch code {
	case sip.StatusBusyHere:
		return dial.Result{Status: dial.StatusBusy, SIPCode: code}, nil
	case sip.StatusRequestTimeout, sip.StatusTemporarilyUnavailable, sip.StatusRequestTerminated:
		return dial.Result{Status: dial.StatusNoAnswer, SIPCode: code}, nil
	}
	return dial.Result{Status: dial.StatusFailed, Reason: text, SIPCode: code}, nil
}

// sipLimitReason reports reason phrases trunks use for rate or concurrency
// limits ("Too Many Calls", "CPS Limit Exceeded", ...).
func sipLimitReason(reason string) bool {
	r := strings.ToLower(reason)
	return strings.Contains(r, "too many calls") || strings.Contains(r, "limit exceeded") ||
		strings.Contains(r, "limit reached")
}

// parseRetryAfter reads a Retry-After value in seconds ("30", "30;duration=...").
func parseRetryAfter(v string) time.Duration {
	v, _, _ = strings.Cut(strings.TrimSpace(v), ";")
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, time.Hour)
}
