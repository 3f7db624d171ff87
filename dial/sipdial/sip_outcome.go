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

// sdpOffer is a minimal audio offer. The dialer does signalling only: port
// 9 (discard) is named and no RTP is ever sent or read.
func sdpOffer(host string) []byte {
	ipv := "IP4"
	if strings.Contains(host, ":") {
		ipv = "IP6"
	}
	sess := strconv.FormatInt(time.Now().Unix(), 10)
	return []byte("v=0\r\n" +
		"o=agentd " + sess + " " + sess + " IN " + ipv + " " + host + "\r\n" +
		"s=agentd\r\n" +
		"c=IN " + ipv + " " + host + "\r\n" +
		"t=0 0\r\n" +
		"m=audio 9 RTP/AVP 0 8\r\n" +
		"a=rtpmap:0 PCMU/8000\r\n" +
		"a=rtpmap:8 PCMA/8000\r\n" +
		"a=sendrecv\r\n")
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
