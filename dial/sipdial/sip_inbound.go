package sipdial

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"

	"github.com/emiago/sipgo/sip"
)

// Inbound SIP calls: an INVITE to the dialer's socket for a number of a
// voice agent is answered with an SDP answer to its offer, recorded
// through the dial.Inbound, handed to the Talker and followed to its BYE.
// Without a dial.Inbound every INVITE is refused (403).

// SetInbound makes the dialer answer INVITEs and report them to in.
func (s *Dialer) SetInbound(in dial.Inbound) {
	s.mu.Lock()
	s.inbound = in
	s.mu.Unlock()
}

// LocalAddr is the address the dialer's socket listens on (host:port):
// where a trunk sends inbound INVITEs.
func (s *Dialer) LocalAddr() string { return s.laddr.String() }

// sipUser is the E.164 number in a SIP URI's user part ("+1555..." or
// "1555..."), "" when it is not one.
func sipUser(u sip.Uri) string {
	user := strings.TrimSpace(u.User)
	if !validSIPNumber(user) {
		return ""
	}
	if !strings.HasPrefix(user, "+") {
		user = "+" + user
	}
	return user
}

// onInvite answers an inbound INVITE (in its own goroutine: sipgo runs each
// request's handler on one) and follows the call to its end.
func (s *Dialer) onInvite(req *sip.Request, tx sip.ServerTransaction) {
	if h := req.To(); h != nil && h.Params.Has("tag") && s.onReinvite(req, tx) { // sip_media.go
		return
	}
	s.mu.Lock()
	in, closed := s.inbound, s.closed
	if in != nil && !closed {
		s.calls.Add(1)
	}
	s.mu.Unlock()
	if in == nil || closed {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusForbidden, "dial.Inbound calls not accepted", nil))
		return
	}
	defer s.calls.Done()
	to, from := "", ""
	if h := req.To(); h != nil {
		to = sipUser(h.Address)
	}
	if to == "" {
		to = sipUser(req.Recipient)
	}
	if h := req.From(); h != nil {
		from = sipUser(h.Address)
	}
	if to == "" {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusNotFound, "Not Found", nil))
		return
	}
	if callID(req) == "" || req.From() == nil || req.To() == nil || req.CSeq() == nil {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusBadRequest, "Bad Request", nil))
		return
	}
	offer, err := media.ParseSDP(req.Body())
	var codec media.Codec
	if err == nil {
		codec, err = media.Negotiate(offer)
	}
	if err != nil {
		// A delayed offer (no SDP in the INVITE) is not supported either.
		s.log.Info("sip inbound: offer refused", "to", to, "from", from, "err", err)
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusNotAcceptableHere, "Not Acceptable Here", nil))
		return
	}
	cm := &callMedia{}
	if err := s.openMedia(cm); err != nil {
		s.log.Warn("sip inbound: no RTP port", "err", err)
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusServiceUnavailable, "No RTP Port Free", nil))
		return
	}
	defer cm.sess.Close()
	dlg, err := s.inDialogs.ReadInvite(req, tx)
	if err != nil {
		s.log.Warn("sip inbound: read invite", "err", err)
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusBadRequest, "Bad Request", nil))
		return
	}
	defer dlg.Close()
	ctx := context.Background()
	c := dial.InboundCall{From: from, To: to, Dialer: s.Name(), Key: callID(req), At: time.Now().UTC()}
	id, err := in.InboundStarted(ctx, c)
	switch {
	case errors.Is(err, dial.ErrNoAgent):
		s.log.Info("sip inbound: no voice agent for the number", "to", to, "from", from)
		_ = dlg.Respond(sip.StatusNotFound, "Not Found", nil)
		return
	case err != nil:
		s.log.Error("sip inbound: record", "to", to, "err", err)
		_ = dlg.Respond(sip.StatusInternalServerError, "Server Internal Error", nil)
		return
	}
	s.log.Info("sip inbound call answered", "call", id, "to", to, "from", from, "sipCallId", c.Key)
	// Media starts with the answer, so the caller's first words are heard.
	cm.sdp = media.Answer(s.sdpParams(cm), codec)
	if err := cm.sess.Start(offer); err != nil {
		c.At = time.Now().UTC()
		in.InboundEnded(ctx, c, dial.StatusFailed, "media: "+err.Error())
		_ = dlg.Respond(sip.StatusNotAcceptableHere, "Not Acceptable Here", nil)
		return
	}
	if err := dlg.RespondSDP(cm.sdp); err != nil {
		c.At = time.Now().UTC()
		in.InboundEnded(ctx, c, dial.StatusFailed, "answer not acknowledged: "+err.Error())
		return
	}
	cm.info = dlg.Do
	if h := req.Contact(); h != nil {
		cm.target = *h.Address.Clone()
	} else {
		cm.target = *req.From().Address.Clone()
	}
	s.media.Store(c.Key, cm)
	defer s.media.Delete(c.Key)

	why, end := s.converse(context.Background(), dlg.Context().Done(), dial.Session{
		Call: dial.Call{ID: id}, Direction: "inbound", From: from, To: to, Media: cm.sess,
		Transfer: s.transferFor(cm, c.Key, to),
	}, s.cfg.Talker)
	if why != "far end" {
		if why == "max duration" {
			s.log.Info("sip inbound: max call duration reached, hanging up", "call", id)
		}
		byeCtx, cancel := context.WithTimeout(context.Background(), sipHangupGrace)
		if err := dlg.Bye(byeCtx); err != nil {
			s.log.Warn("sip inbound: bye", "err", err)
		}
		cancel()
	}
	c.At = time.Now().UTC()
	status := dial.StatusCompleted
	if end.Reason != "" {
		status = dial.StatusFailed
	}
	in.InboundEnded(ctx, c, status, end.Reason)
	s.log.Info("sip inbound call ended", "call", id, "by", why)
}

// onAck confirms an answered inbound call; ACKs of our own outbound
// dialogs never reach a server handler.
func (s *Dialer) onAck(req *sip.Request, tx sip.ServerTransaction) {
	_ = s.inDialogs.ReadAck(req, tx)
}
