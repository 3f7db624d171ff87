package calls

import (
	"context"
	"encoding/json"
)

// withVoice adds what agentd's own voice loop recorded: the latency, who
// answered (answering-machine detection) and the transfer attempts.
func (s *Service) withVoice(ctx context.Context, rec Record) (Record, error) {
	rec, err := s.withLatency(ctx, rec)
	if err != nil {
		return rec, err
	}
	c, ok, err := s.db.Calls.GetCallControl(ctx, rec.ID)
	if err != nil || !ok {
		return rec, err
	}
	rec.AnsweredBy = strPtr(c.AnsweredBy)
	if len(c.Transfers) > 0 && string(c.Transfers) != "[]" {
		rec.Transfers = json.RawMessage(c.Transfers)
	}
	return rec, nil
}
