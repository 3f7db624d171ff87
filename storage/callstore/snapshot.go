package callstore

import (
	"encoding/json"
	"fmt"
)

// SnapshotVersion is the format of the data call.* and batch.completed
// events record (sqldb.Event.Version): a CallSnapshot or a BatchSummary as
// JSON, read back with DecodeCallSnapshot and DecodeBatchSummary. The events
// feature renders the public body from it where an event leaves the
// process. A change of format is a new version, and the decoders keep
// reading the old ones.
const SnapshotVersion = 1

// callJSON is the stored form of a Call: JSON documents kept as text, so
// they come back byte for byte and nil stays nil (the outer fields hide the
// embedded ones of the same name).
type callJSON struct {
	Call
	RetryPolicy, Window, Metadata, CallMetadata *string
}

// resultJSON is the stored form of a CallResult.
type resultJSON struct {
	CallResult
	Transcript, Metadata *string
}

// snapshotJSON is the stored form of a CallSnapshot.
type snapshotJSON struct {
	Call     callJSON
	Attempts []CallAttempt
	Result   *resultJSON
}

// MarshalJSON encodes the snapshot in its stored form.
func (s CallSnapshot) MarshalJSON() ([]byte, error) {
	c := s.Call
	out := snapshotJSON{Call: callJSON{Call: c, RetryPolicy: text(c.RetryPolicy), Window: text(c.Window),
		Metadata: text(c.Metadata), CallMetadata: text(c.CallMetadata)}, Attempts: s.Attempts}
	if r := s.Result; r != nil {
		out.Result = &resultJSON{CallResult: *r, Transcript: text(r.Transcript), Metadata: text(r.Metadata)}
	}
	return json.Marshal(out)
}

// DecodeCallSnapshot reads the data of a call event recorded in format
// version.
func DecodeCallSnapshot(data []byte, version int) (CallSnapshot, error) {
	if version != SnapshotVersion {
		return CallSnapshot{}, fmt.Errorf("storage: call snapshot format %d", version)
	}
	var in snapshotJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return CallSnapshot{}, fmt.Errorf("storage: call snapshot: %w", err)
	}
	c := in.Call.Call
	c.RetryPolicy, c.Window, c.Metadata, c.CallMetadata = raw(in.Call.RetryPolicy), raw(in.Call.Window),
		raw(in.Call.Metadata), raw(in.Call.CallMetadata)
	s := CallSnapshot{Call: c, Attempts: in.Attempts}
	if r := in.Result; r != nil {
		res := r.CallResult
		res.Transcript, res.Metadata = raw(r.Transcript), raw(r.Metadata)
		s.Result = &res
	}
	return s, nil
}

// DecodeBatchSummary reads the data of a batch.completed event recorded in
// format version.
func DecodeBatchSummary(data []byte, version int) (BatchSummary, error) {
	var s BatchSummary
	if version != SnapshotVersion {
		return s, fmt.Errorf("storage: batch snapshot format %d", version)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("storage: batch snapshot: %w", err)
	}
	return s, nil
}

// text is a JSON document as text (nil for none).
func text(b json.RawMessage) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// raw is the document text keeps.
func raw(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}
