package sipdial

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/google/uuid"
)

// Why Dial ended an INVITE before its final answer.
const (
	stopCancelled  = "cancelled"
	stopRing       = "ring timeout"
	stopNoResponse = "no response"
)

// errSIPClosed is returned by Dial after Close.
var errSIPClosed = errors.New("sip dialer closed")

// Dial places one call attempt; see dial.Dialer. The SIP Call-ID is reported as
// SIPParticipantID. Dial is safe for concurrent use.
func (s *Dialer) Dial(ctx context.Context, c dial.Call, progress func(dial.Progress)) (dial.Result, error) {
	if progress == nil {
		progress = func(dial.Progress) {}
	}
	if !validSIPNumber(c.PhoneNumber) {
		return dial.Result{Status: dial.StatusFailed, Reason: fmt.Sprintf("invalid phone number %q", c.PhoneNumber)}, nil
	}
	caller := c.CallerID
	if caller == "" {
		caller = "anonymous"
	} else if !validSIPNumber(caller) {
		return dial.Result{Status: dial.StatusFailed, Reason: fmt.Sprintf("invalid caller ID %q", caller)}, nil
	}

	k := &sipCall{s: s, callID: uuid.NewString(), progress: progress, call: c, caller: caller}
	return s.place(ctx, k, s.trunkURI(c.PhoneNumber))
}

// trunkURI is number at the trunk.
func (s *Dialer) trunkURI(number string) sip.Uri {
	return sip.Uri{Scheme: "sip", User: number, Host: s.trunkHost, Port: s.trunkPort}
}

// place sends the INVITE of k to uri and runs the call to its end.
func (s *Dialer) place(ctx context.Context, k *sipCall, uri sip.Uri) (dial.Result, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return dial.Result{}, errSIPClosed
	}
	s.calls.Add(1)
	s.mu.Unlock()
	defer s.calls.Done()

	caller := k.caller
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()

	if err := s.openMedia(&k.media); err != nil {
		return dial.Result{Status: dial.StatusFailed, Reason: "no RTP port free: " + err.Error()}, nil
	}
	defer k.media.sess.Close()
	k.media.sdp = media.Offer(s.sdpParams(&k.media))
	dlg, err := s.dialogs.WriteInvite(ctx, s.newInvite(k.callID, uri, caller, k.media.sdp))
	if err != nil {
		if ctx.Err() != nil {
			return dial.Result{Status: dial.StatusCancelled}, nil
		}
		return dial.Result{Status: dial.StatusFailed, Reason: "trunk unreachable: " + err.Error()}, nil
	}
	defer dlg.Close()
	k.dlg = dlg
	k.report(dial.StatusConnecting)

	answered, stopped, res, err := k.waitAnswer(ctx)
	if !answered || err != nil {
		return res, err
	}
	return k.talk(ctx, stopped), nil
}

// newInvite builds the INVITE: To and Request-URI carry the callee (at the
// trunk, or a transfer's sip: URI), From the caller ID, with the SDP offer.
func (s *Dialer) newInvite(callID string, uri sip.Uri, caller string, offer []byte) *sip.Request {
	uri = *uri.Clone()
	if s.cfg.Transport == "tcp" {
		uri.UriParams = sip.NewParams()
		uri.UriParams.Add("transport", "tcp")
	}
	req := sip.NewRequest(sip.INVITE, uri)
	from := &sip.FromHeader{Address: sip.Uri{Scheme: "sip", User: caller, Host: s.cfg.FromDomain}}
	from.Params.Add("tag", sip.GenerateTagN(16))
	to := &sip.ToHeader{Address: sip.Uri{Scheme: "sip", User: uri.User, Host: uri.Host, Port: uri.Port}}
	cid := sip.CallIDHeader(callID)
	req.AppendHeader(from)
	req.AppendHeader(to)
	req.AppendHeader(&cid)
	req.AppendHeader(sip.HeaderClone(s.contact()))
	req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	req.AppendHeader(sip.NewHeader("User-Agent", "agentd"))
	req.SetBody(offer)
	if s.cfg.Transport == "tcp" {
		req.SetTransport("TCP")
	}
	return req
}

// sipCall is the state of one Dial.
type sipCall struct {
	s        *Dialer
	callID   string
	dlg      *sipgo.DialogClientSession
	progress func(dial.Progress)
	ringing  bool
	gotResp  bool
	call     dial.Call
	caller   string
	media    callMedia
	// talker speaks on the call instead of the dialer's (a transfer's
	// second leg, handed to the first call's talker).
	talker dial.Talker
}

func (k *sipCall) report(status string) {
	k.progress(dial.Progress{Status: status, At: time.Now(), SIPParticipantID: k.callID})
}

// sipResp is what the answer goroutine hands over of each response.
type sipResp struct {
	code   int
	reason string
}

// waitAnswer waits for the INVITE's final answer under the dialer's own
// deadlines. sipgo's WaitAnswer runs in a goroutine (it sends CANCEL when
// its context ends) so that a trunk that never confirms the CANCEL cannot
// hold Dial past sipHangupGrace. answered reports a 2xx (ACK not yet sent);
// stopped says whether Dial had already decided to end the attempt.
func (k *sipCall) waitAnswer(ctx context.Context) (answered bool, stopped string, res dial.Result, err error) {
	cfg := k.s.cfg
	respCh := make(chan sipResp, 32)
	waitCtx, stopWait := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	k.s.bg.Add(1)
	go func() {
		defer k.s.bg.Done()
		done <- k.dlg.WaitAnswer(waitCtx, sipgo.AnswerOptions{
			Username: cfg.Username,
			Password: cfg.Password,
			OnResponse: func(r *sip.Response) error {
				select {
				case respCh <- sipResp{r.StatusCode, r.Reason}:
				default: // more than 32 answers: only the first ones matter
				}
				return nil
			},
		})
	}()

	respTimer := time.NewTimer(cfg.ResponseTimeout)
	defer respTimer.Stop()
	ringTimer := time.NewTimer(cfg.RingTimeout)
	defer ringTimer.Stop()
	respC, ringC, ctxC := respTimer.C, ringTimer.C, ctx.Done()
	var graceC <-chan time.Time

	handle := func(r sipResp) {
		if !k.gotResp {
			k.gotResp = true
			respC = nil
		}
		if r.code < 200 && !k.ringing && stopped == "" {
			k.ringing = true
			k.report(dial.StatusRinging)
		}
	}
	stop := func(why string) {
		stopped = why
		respC, ringC, ctxC = nil, nil, nil
		graceC = time.After(sipHangupGrace)
		if why == stopNoResponse {
			// Nothing came back: no CANCEL is allowed before a
			// provisional answer (RFC 3261 9.1), so just drop the INVITE.
			stopWait(sipgo.WaitAnswerForceCancelErr)
			return
		}
		// WaitAnswer sends CANCEL (after the first provisional answer)
		// and waits for the 487.
		stopWait(errors.New(why))
	}

	for {
		select {
		case r := <-respCh:
			handle(r)
		case werr := <-done:
			for drained := false; !drained; {
				select {
				case r := <-respCh:
					handle(r)
				default:
					drained = true
				}
			}
			res, err = k.settle(werr, stopped)
			inv := k.dlg.InviteResponse
			return inv != nil && inv.IsSuccess(), stopped, res, err
		case <-respC:
			stop(stopNoResponse)
		case <-ringC:
			if k.gotResp {
				stop(stopRing)
			} else {
				stop(stopNoResponse)
			}
		case <-ctxC:
			stop(stopCancelled)
		case <-graceC:
			// The trunk did not confirm in time: report now and let a
			// goroutine finish the transaction (and hang up a late 200).
			k.s.bg.Add(1)
			go func() {
				defer k.s.bg.Done()
				<-done
				if inv := k.dlg.InviteResponse; inv != nil && inv.IsSuccess() {
					k.hangupAnswered()
				}
			}()
			return false, stopped, stoppedResult(stopped, 0), nil
		}
	}
}

// settle turns the end of WaitAnswer into a dial.Result for a call that was not
// answered. It only reads the dialog after WaitAnswer returned.
func (k *sipCall) settle(werr error, stopped string) (dial.Result, error) {
	var final *sip.Response
	if inv := k.dlg.InviteResponse; inv != nil && !inv.IsProvisional() {
		final = inv
	}
	if werr == nil || (final != nil && final.IsSuccess()) {
		return dial.Result{}, nil // answered: talk decides
	}
	code := 0
	if final != nil {
		code = final.StatusCode
	}
	if stopped != "" {
		return stoppedResult(stopped, code), nil
	}
	if de := (*sipgo.ErrDialogResponse)(nil); errors.As(werr, &de) {
		return sipFinalResult(de.Res)
	}
	if !k.gotResp {
		return dial.Result{Status: dial.StatusFailed, Reason: "no response from trunk: " + werr.Error()}, nil
	}
	return dial.Result{Status: dial.StatusFailed, Reason: "sip: " + werr.Error()}, nil
}

// stoppedResult is the outcome of an attempt Dial ended itself; code is
// the final answer to the INVITE when one came (487 after CANCEL).
func stoppedResult(stopped string, code int) dial.Result {
	switch stopped {
	case stopCancelled:
		return dial.Result{Status: dial.StatusCancelled, SIPCode: code}
	case stopRing:
		return dial.Result{Status: dial.StatusNoAnswer, SIPCode: code}
	default:
		return dial.Result{Status: dial.StatusFailed, Reason: "no response from trunk"}
	}
}

// talk ACKs the 2xx, reports active and waits for a BYE from the callee,
// the caller's cancel or the maximum duration.
func (k *sipCall) talk(ctx context.Context, stopped string) dial.Result {
	answeredAt := time.Now()
	took := func() time.Duration { return time.Since(answeredAt).Round(time.Millisecond) }
	if err := k.dlg.Ack(context.Background()); err != nil {
		k.s.log.Warn("sip ACK failed", "callId", k.callID, "err", err)
		k.bye()
		return dial.Result{Status: dial.StatusFailed, Reason: "sip: ACK failed: " + err.Error(), SIPCode: 200}
	}
	if stopped == stopCancelled {
		k.report(dial.StatusActive)
		k.bye()
		return dial.Result{Status: dial.StatusCancelled, SIPCode: 200, Duration: took()}
	}
	answer, err := media.ParseSDP(k.dlg.InviteResponse.Body())
	if err == nil {
		err = k.media.sess.Start(answer)
	}
	if err != nil {
		k.s.log.Warn("sip: unusable SDP answer", "callId", k.callID, "err", err)
		k.bye()
		return dial.Result{Status: dial.StatusFailed, Reason: "sip: unusable SDP answer: " + err.Error(), SIPCode: 200}
	}
	k.media.target = k.target()
	k.media.info = k.dlg.Do
	k.s.media.Store(k.callID, &k.media)
	defer k.s.media.Delete(k.callID)
	k.report(dial.StatusActive)

	sess := dial.Session{Call: k.call, Direction: "outbound", From: k.caller, To: k.call.PhoneNumber, Media: k.media.sess}
	talker := k.talker
	if talker == nil {
		talker = k.s.cfg.Talker
		sess.Transfer = k.s.transferFor(&k.media, k.callID, k.caller)
	}
	why, end := k.s.converse(ctx, k.dlg.Context().Done(), sess, talker)
	res := dial.Result{Status: dial.StatusCompleted, SIPCode: 200}
	switch why {
	case "far end": // the callee's BYE (answered 200 by onBye)
	case "cancelled", "closing":
		res.Status = dial.StatusCancelled
		k.bye()
	default:
		k.bye()
	}
	if end.Reason != "" {
		res.Status, res.Reason = dial.StatusFailed, end.Reason
	}
	res.Duration = took()
	return res
}

// target is where requests in the dialog go: the callee's Contact.
func (k *sipCall) target() sip.Uri {
	target := k.dlg.InviteRequest.Recipient
	if c := k.dlg.InviteResponse.Contact(); c != nil {
		target = c.Address
	}
	return *target.Clone()
}

// hangupAnswered ends a call that was answered after Dial gave up on it.
func (k *sipCall) hangupAnswered() {
	if err := k.dlg.Ack(context.Background()); err != nil {
		k.s.log.Warn("sip ACK of late answer failed", "callId", k.callID, "err", err)
		return
	}
	k.bye()
}

// bye sends BYE from the listening socket and waits a bounded time for
// its answer.
func (k *sipCall) bye() {
	ctx, cancel := context.WithTimeout(context.Background(), sipHangupGrace)
	defer cancel()
	req := sip.NewRequest(sip.BYE, k.target())
	if k.s.cfg.Transport == "udp" {
		req.Laddr = k.s.laddr
	}
	if err := k.dlg.WriteBye(ctx, req); err != nil {
		k.s.log.Warn("sip BYE failed", "callId", k.callID, "err", err)
	}
}
