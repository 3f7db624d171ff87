package livekitdial

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentd/agentd/dial"
)

// sipOutcome maps a failed CreateSIPParticipant to the attempt's outcome.
//
//   - a rate/CPS/concurrency limit answer: ErrRetryLater (no attempt spent);
//   - a final SIP status (meta sip_status_code, or "sip status N" in the
//     message): 486/600 busy, 408/480/487 no_answer, any other >= 300 failed
//     with "SIP <code> <reason>";
//   - no SIP status: failed with a reason naming LiveKit's answer. The call may
//     already have rung when the connection dropped, so this never re-queues.
func sipOutcome(err error) (dial.Result, error) {
	var te *lkTwirpError
	if !errors.As(err, &te) {
		return dial.Result{Status: dial.StatusFailed, Reason: "livekit: " + err.Error()}, nil
	}
	if te.limited() {
		return dial.Result{}, &dial.Pushback{Reason: te.Error()}
	}
	if code, phrase := twirpSIPStatus(te); code >= 300 {
		res := dial.Result{SIPCode: code}
		switch code {
		case 486, 600:
			res.Status = dial.StatusBusy
		case 408, 480, 487:
			res.Status = dial.StatusNoAnswer
		default:
			res.Status = dial.StatusFailed
			res.Reason = fmt.Sprintf("SIP %d %s", code, phrase)
		}
		return res, nil
	}
	switch {
	case te.Transport != nil:
		return dial.Result{Status: dial.StatusFailed, Reason: "livekit: connection lost while dialing: " + te.Transport.Error()}, nil
	case te.Code == "unavailable":
		return dial.Result{Status: dial.StatusFailed, Reason: "livekit: no SIP service answered (is livekit-sip running and connected to the same Redis?): " + te.Msg}, nil
	case te.Code == "deadline_exceeded":
		return dial.Result{Status: dial.StatusNoAnswer, Reason: "livekit: dial timed out: " + te.Msg}, nil
	case te.Code == "not_found":
		return dial.Result{Status: dial.StatusFailed, Reason: "livekit: " + te.Msg + " (check the outbound trunk id)"}, nil
	}
	return dial.Result{Status: dial.StatusFailed, Reason: te.Error()}, nil
}

var sipStatusInMsg = regexp.MustCompile(`(?i)sip status:? (\d{3})(?::\s*(.*))?`)

// twirpSIPStatus reads the final SIP status of an error answer: meta
// sip_status_code/sip_status as LiveKit sets them, else "sip status N: text"
// in the message. It returns 0 when there is none.
func twirpSIPStatus(te *lkTwirpError) (int, string) {
	code, _ := strconv.Atoi(strings.TrimSpace(te.Meta["sip_status_code"]))
	phrase := strings.TrimSpace(te.Meta["sip_status"])
	if code == 0 {
		if m := sipStatusInMsg.FindStringSubmatch(te.Msg); m != nil {
			code, _ = strconv.Atoi(m[1])
			phrase = strings.TrimSpace(m[2])
		}
	}
	if code < 100 || code > 699 {
		return 0, ""
	}
	// LiveKit falls back to the enum name (SIP_STATUS_NOTFOUND) when the
	// far end sent no reason phrase: use the standard phrase then.
	if phrase == "" || strings.HasPrefix(phrase, "SIP_STATUS_") {
		phrase = sipReasonPhrase(code)
	}
	return code, phrase
}

// sipReasonPhrase is the RFC 3261 (and extensions) phrase of a final status.
func sipReasonPhrase(code int) string {
	switch code {
	case 300:
		return "Multiple Choices"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Moved Temporarily"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 402:
		return "Payment Required"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 407:
		return "Proxy Authentication Required"
	case 408:
		return "Request Timeout"
	case 410:
		return "Gone"
	case 480:
		return "Temporarily Unavailable"
	case 484:
		return "Address Incomplete"
	case 486:
		return "Busy Here"
	case 487:
		return "Request Terminated"
	case 488:
		return "Not Acceptable Here"
	case 500:
		return "Server Internal Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Server Time-out"
	case 600:
		return "Busy Everywhere"
	case 603:
		return "Decline"
	case 604:
		return "Does Not Exist Anywhere"
	case 606:
		return "Not Acceptable"
	}
	return "Error"
}
