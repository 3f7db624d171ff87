package sipdial

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/emiago/sipgo/sip"
	"github.com/google/uuid"
)

// Transfers: a SIP REFER in the call's dialog (the far end calls the
// target itself and reports how that went in NOTIFYs carrying a
// message/sipfrag), or a second leg agentd places and bridges itself.

// referWait bounds the wait for the NOTIFY that says how a REFER ended.
const referWait = 30 * time.Second

// transferer is one call's dial.Transfer.
type transferer struct {
	s      *Dialer
	cm     *callMedia
	callID string // the SIP Call-ID the REFER and its NOTIFYs share
	caller string // caller ID of a second leg
}

func (s *Dialer) transferFor(cm *callMedia, callID, caller string) dial.Transfer {
	return &transferer{s: s, cm: cm, callID: callID, caller: caller}
}

// targetURI is a transfer target: a sip: URI as given, or an E.164 number
// at the trunk.
func (s *Dialer) targetURI(target string) (sip.Uri, error) {
	if strings.HasPrefix(strings.ToLower(target), "sip:") {
		var u sip.Uri
		if err := sip.ParseUri(target, &u); err != nil || u.Host == "" {
			return sip.Uri{}, fmt.Errorf("bad SIP URI %q", target)
		}
		return u, nil
	}
	if !validSIPNumber(target) {
		return sip.Uri{}, fmt.Errorf("invalid number %q", target)
	}
	return s.trunkURI(target), nil
}

// Refer sends REFER and waits for the final sipfrag of its NOTIFYs.
func (t *transferer) Refer(ctx context.Context, target string) error {
	uri, err := t.s.targetURI(target)
	if err != nil {
		return err
	}
	if t.cm.info == nil {
		return errors.New("no dialog")
	}
	ch := make(chan int, 8)
	t.s.refers.Store(t.callID, ch) // before sending: a NOTIFY may beat the 202
	defer t.s.refers.Delete(t.callID)
	req := sip.NewRequest(sip.REFER, *t.cm.target.Clone())
	req.AppendHeader(sip.NewHeader("Refer-To", "<"+uri.String()+">"))
	req.AppendHeader(sip.NewHeader("Referred-By", "<"+t.s.contactHd.Address.String()+">"))
	req.AppendHeader(sip.HeaderClone(t.s.contact()))
	if t.s.cfg.Transport == "udp" {
		req.Laddr = t.s.laddr
	} else {
		req.SetTransport("TCP")
	}
	rctx, cancel := context.WithTimeout(ctx, sipHangupGrace)
	res, err := t.cm.info(rctx, req)
	cancel()
	if err != nil {
		return fmt.Errorf("REFER: %w", err)
	}
	if !res.IsSuccess() {
		return fmt.Errorf("%w: %d %s", dial.ErrReferRefused, res.StatusCode, res.Reason)
	}
	wait := time.NewTimer(referWait)
	defer wait.Stop()
	for {
		select {
		case code := <-ch:
			switch {
			case code < 200:
				continue
			case code < 300:
				return nil
			}
			return &dial.LegError{Status: legStatus(code), Reason: "the transfer target answered " + strconv.Itoa(code)}
		case <-wait.C:
			return errors.New("REFER: no final NOTIFY within 30 s")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func legStatus(code int) string {
	switch code {
	case 486, 600:
		return dial.StatusBusy
	case 408, 480, 487:
		return dial.StatusNoAnswer
	}
	return dial.StatusFailed
}

// onNotify takes the NOTIFYs of a REFER we sent (Event: refer).
func (s *Dialer) onNotify(req *sip.Request, tx sip.ServerTransaction) {
	v, ok := s.refers.Load(callID(req))
	if !ok {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusCallTransactionDoesNotExists, "Call/Transaction Does Not Exist", nil))
		return
	}
	s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusOK, "OK", nil))
	if code, ok := ParseSipfrag(req.Body()); ok {
		select {
		case v.(chan int) <- code:
		default:
		}
	}
}

// ParseSipfrag reads the status code of a message/sipfrag body's status
// line ("SIP/2.0 200 OK"); false for anything else.
func ParseSipfrag(body []byte) (int, bool) {
	if len(body) > 4096 {
		return 0, false
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 2 || !strings.EqualFold(f[0], "SIP/2.0") || len(f[1]) != 3 {
		return 0, false
	}
	code, err := strconv.Atoi(f[1])
	if err != nil || code < 100 || code > 699 {
		return 0, false
	}
	return code, true
}

// Dial places a second leg to target and returns it once answered.
func (t *transferer) Dial(ctx context.Context, target string) (dial.Leg, error) {
	uri, err := t.s.targetURI(target)
	if err != nil {
		return nil, &dial.LegError{Status: dial.StatusFailed, Reason: err.Error()}
	}
	l := &leg{answered: make(chan dial.Media, 1), release: make(chan struct{}), done: make(chan struct{})}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	caller := t.caller
	if caller == "" || !validSIPNumber(caller) {
		caller = "anonymous"
	}
	k := &sipCall{s: t.s, callID: uuid.NewString(), progress: func(dial.Progress) {}, caller: caller, talker: l,
		call: dial.Call{ID: "transfer-" + t.callID, PhoneNumber: uri.User, CallerID: caller}}
	go func() {
		defer close(l.done)
		res, err := t.s.place(lctx, k, uri)
		if err != nil {
			res = dial.Result{Status: dial.StatusFailed, Reason: err.Error()}
		}
		l.res = res
	}()
	select {
	case m := <-l.answered:
		l.media = m
		return l, nil
	case <-l.done:
		r := l.res
		if r.Status == dial.StatusCompleted { // answered and gone at once
			r.Status, r.Reason = dial.StatusFailed, "hung up at once"
		}
		return nil, &dial.LegError{Status: r.Status, Reason: r.Reason}
	case <-ctx.Done():
		cancel()
		<-l.done
		return nil, ctx.Err()
	}
}

// leg is a second call: its own Talker hands its media over and holds the
// call until Hangup or the far end's BYE.
type leg struct {
	answered chan dial.Media
	release  chan struct{}
	once     sync.Once
	done     chan struct{}
	cancel   context.CancelFunc
	media    dial.Media
	res      dial.Result
}

func (l *leg) Talk(ctx context.Context, s dial.Session) dial.TalkEnd {
	l.answered <- s.Media
	select {
	case <-ctx.Done():
	case <-l.release:
	}
	return dial.TalkEnd{}
}

func (l *leg) Media() dial.Media     { return l.media }
func (l *leg) Done() <-chan struct{} { return l.done }

// Hangup ends the leg (its Talk returns: the dialer sends BYE).
func (l *leg) Hangup() {
	l.once.Do(func() { close(l.release) })
	select {
	case <-l.done:
	case <-time.After(sipHangupGrace + time.Second):
		l.cancel()
		<-l.done
	}
}
