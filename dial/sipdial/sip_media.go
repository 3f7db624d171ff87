package sipdial

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"

	"github.com/emiago/sipgo/sip"
)

// The audio of a call: its RTP session (dial/media), the SDP we gave for
// it, and the Talker that speaks on it once the call is answered.

// talkWait bounds how long a call's end waits for the Talker to return
// after its context was cancelled.
const talkWait = 5 * time.Second

// callMedia is one call's media, found by SIP Call-ID for INFO and
// re-INVITE.
type callMedia struct {
	sess *media.Session
	sdp  []byte // our offer or answer, repeated to a re-INVITE
	// info sends a SIP INFO in the call's dialog (the DTMF fallback).
	info func(ctx context.Context, req *sip.Request) (*sip.Response, error)
	// target is where in-dialog requests go (the peer's Contact).
	target sip.Uri
}

// openMedia binds the call's RTP ports.
func (s *Dialer) openMedia(cm *callMedia) error {
	sess, err := s.ports.Open(s.mediaBind, media.Options{Log: s.log, SendInfo: s.infoSender(cm)})
	if err != nil {
		return err
	}
	cm.sess = sess
	return nil
}

func (s *Dialer) sdpParams(cm *callMedia) media.SDPParams {
	return media.SDPParams{Addr: s.sdpAddr, Port: cm.sess.Port(), Session: uint64(rand.Uint32())}
}

// infoSender sends one digit as SIP INFO (application/dtmf-relay).
func (s *Dialer) infoSender(cm *callMedia) func(ctx context.Context, d byte) error {
	return func(ctx context.Context, d byte) error {
		if cm.info == nil {
			return errors.New("no dialog")
		}
		req := sip.NewRequest(sip.INFO, *cm.target.Clone())
		req.AppendHeader(sip.NewHeader("Content-Type", "application/dtmf-relay"))
		req.SetBody(media.InfoBody(d))
		if s.cfg.Transport == "udp" {
			req.Laddr = s.laddr
		} else {
			req.SetTransport("TCP")
		}
		ctx, cancel := context.WithTimeout(ctx, sipHangupGrace)
		defer cancel()
		res, err := cm.info(ctx, req)
		if err != nil {
			return err
		}
		if !res.IsSuccess() {
			return errors.New(res.StartLine())
		}
		return nil
	}
}

// onInfo takes DTMF sent as SIP INFO in one of our calls.
func (s *Dialer) onInfo(req *sip.Request, tx sip.ServerTransaction) {
	_, errOut := s.dialogs.MatchRequestDialog(req)
	_, errIn := s.inDialogs.MatchDialogRequest(req)
	v, ok := s.media.Load(callID(req))
	if (errOut != nil && errIn != nil) || !ok {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusCallTransactionDoesNotExists, "Call/Transaction Does Not Exist", nil))
		return
	}
	ct := ""
	if h := req.ContentType(); h != nil {
		ct = h.Value()
	}
	if len(req.Body()) == 0 {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusOK, "OK", nil)) // a keepalive INFO
		return
	}
	d, ok := media.ParseInfo(ct, req.Body())
	if !ok {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusUnsupportedMediaType, "Unsupported Media Type", nil))
		return
	}
	v.(*callMedia).sess.InjectDigit(d)
	s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusOK, "OK", nil))
}

// converse runs an answered call until one side ends it: the Talker
// returns (the agent hung up), hungUp ends (the far end's BYE), ctx ends
// or the maximum duration passes. It reports which, and the Talker's end
// when it returned. The Talker's context is cancelled in every case and
// converse waits (boundedly) for it to return, so the Media is no longer
// used once the call's ports are freed.
func (s *Dialer) converse(ctx context.Context, hungUp <-chan struct{}, ds dial.Session, talker dial.Talker) (why string, end dial.TalkEnd) {
	limit := time.NewTimer(s.cfg.MaxCallDuration)
	defer limit.Stop()
	talkCtx, stopTalk := context.WithCancel(ctx)
	defer stopTalk()
	var ended chan dial.TalkEnd
	if talker != nil {
		ended = make(chan dial.TalkEnd, 1)
		ds.MaxDuration = s.cfg.MaxCallDuration
		go func() { ended <- talker.Talk(talkCtx, ds) }()
	}
	select {
	case <-hungUp:
		why = "far end"
	case <-ctx.Done():
		why = "cancelled"
	case <-limit.C:
		why = "max duration"
	case <-s.closing.Done():
		why = "closing"
	case end = <-ended:
		return "talker", end
	}
	stopTalk()
	if ended != nil {
		select {
		case end = <-ended:
		case <-time.After(talkWait):
			s.log.Warn("sip: the talker did not return after the call ended", "callId", ds.Call.ID)
		}
	}
	return why, end
}

// onReinvite answers an INVITE inside one of our calls (a session refresh,
// hold, or the peer's media moving): the new SDP redirects our RTP, and
// the answer repeats ours. It reports false for a call it does not know,
// which is then treated as any INVITE.
func (s *Dialer) onReinvite(req *sip.Request, tx sip.ServerTransaction) bool {
	v, ok := s.media.Load(callID(req))
	if !ok {
		return false
	}
	cm := v.(*callMedia)
	if len(req.Body()) > 0 {
		d, err := media.ParseSDP(req.Body())
		if err != nil {
			s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusNotAcceptableHere, "Not Acceptable Here", nil))
			return true
		}
		cm.sess.Update(d)
	}
	res := sip.NewSDPResponseFromRequest(req, cm.sdp)
	res.AppendHeader(sip.HeaderClone(s.contact()))
	s.respond(tx, res)
	return true
}

// callID is the request's Call-ID, "" when it has none.
func callID(req *sip.Request) string {
	if h := req.CallID(); h != nil {
		return h.Value()
	}
	return ""
}
