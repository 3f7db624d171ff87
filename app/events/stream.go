package events

import (
	"context"
	"time"

	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// StreamConfig is how a live stream of the log behaves.
type StreamConfig struct {
	Poll      time.Duration // look for other processes' events; default 1 s
	KeepAlive time.Duration // idle time before Ping; default 15 s
}

// Sink receives a stream: Open once the cursor is known to be good (send
// the headers), then each event with its body, and Ping when idle.
type Sink interface {
	Open() error
	Send(e Event, body []byte) error
	Ping() error
}

// Stream sends the organization's events logged after the cursor (an event
// id; "" means from now on) to the sink, in log order, until ctx ends or
// the sink fails. This process's commits wake it at once, and so do other
// processes' on PostgreSQL while the listener is up (the events channel);
// otherwise it polls the log, so events written by any process arrive. An
// unknown cursor is an error before Open.
func (s *Service) Stream(ctx context.Context, orgID, after string, types []string, cfg StreamConfig, sink Sink) error {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	var pos sqldb.Pos
	var err error
	if after == "" {
		pos, err = s.DB.Events.LastEventPos(ctx)
	} else {
		pos, err = s.resolveCursor(ctx, orgID, after)
	}
	if err != nil {
		return err
	}
	if err := sink.Open(); err != nil {
		return err
	}
	idle := time.Now()
	settle := newSettler()
	for {
		// Take the wake-up channel before reading, so a commit in between
		// is never missed.
		committed := s.DB.Events.EventsCommitted()
		if s.DB.NewEvents != nil {
			committed = s.DB.NewEvents.Wake() // every process's events (PostgreSQL), this one's (SQLite)
		}
		evs, err := s.DB.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: orgID, After: pos, Types: types, Limit: 200})
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := sink.Send(view(e), Body(e)); err != nil {
				return err
			}
			pos = e.Pos()
		}
		if len(evs) == 200 {
			continue
		}
		if len(evs) > 0 {
			idle = time.Now()
		}
		poll := s.DB.idlePoll(cfg.Poll)
		wait := min(settle.wait(poll, poll > cfg.Poll), max(time.Until(idle.Add(cfg.KeepAlive)), 0))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-committed:
			settle.woke()
		case <-t.C:
		}
		t.Stop()
		if time.Since(idle) >= cfg.KeepAlive {
			if err := sink.Ping(); err != nil {
				return err
			}
			idle = time.Now()
		}
	}
}
