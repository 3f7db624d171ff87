package voice

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentd/agentd/app/calltransfer"
	"github.com/agentd/agentd/storage/callstore"
)

// CallRecords is the calls store as the loop uses it: the call read by id,
// transcript lines (kept with the call and logged as call.transcript for
// the event stream and the dashboard's live call page) and the latency.
type CallRecords struct {
	DB *callstore.Calls
}

// NewCallRecords wraps the calls store.
func NewCallRecords(db *callstore.Calls) *CallRecords {
	return &CallRecords{DB: db}
}

// TalkerCall reads the call the loop speaks on.
func (r *CallRecords) TalkerCall(ctx context.Context, id string) (callstore.Call, error) {
	return r.DB.TalkerCall(ctx, id)
}

// AppendTranscript keeps lines of the call's transcript and logs them
// (call.transcript) in one transaction.
func (r *CallRecords) AppendTranscript(ctx context.Context, orgID, agentID, callID string, lines []Line) error {
	ls := make([]callstore.TranscriptLine, 0, len(lines))
	for _, l := range lines {
		ls = append(ls, callstore.TranscriptLine{Role: l.Role, Text: l.Text, At: l.At, Interrupted: l.Interrupted})
	}
	return r.DB.AppendLiveTranscript(ctx, orgID, agentID, callID, ls)
}

// SaveLatency keeps the call's latency.
func (r *CallRecords) SaveLatency(ctx context.Context, callID string, l Latency) error {
	turns, err := json.Marshal(l.Turns)
	if err != nil {
		return err
	}
	return r.DB.SaveCallLatency(ctx, callID, callstore.CallLatency{Turns: turns, P50Ms: l.VoiceToVoiceP50Ms, P95Ms: l.VoiceToVoiceP95Ms})
}

// SaveAnsweredBy records who answered the call.
func (r *CallRecords) SaveAnsweredBy(ctx context.Context, callID, answeredBy string, decision time.Duration) error {
	return r.DB.SaveAnsweredBy(ctx, callID, answeredBy, decision, time.Now())
}

// SaveTransfer records a transfer attempt with its event.
func (r *CallRecords) SaveTransfer(ctx context.Context, callID string, a TransferAttempt) error {
	b, ev, err := calltransfer.Record(a)
	if err != nil {
		return err
	}
	return r.DB.AppendTransfer(ctx, callID, b, ev, time.Now())
}
