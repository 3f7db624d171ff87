package callstore

import (
	"encoding/json"

	"github.com/agentd/agentd/storage/sqldb"
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
	out := snapshotJSON{Call: callJSON{Call: c, RetryPolicy: sqldb.JSONText(c.RetryPolicy), Window: sqldb.JSONText(c.Window),
		Metadata: sqldb.JSONText(c.Metadata), CallMetadata: sqldb.JSONText(c.CallMetadata)}, Attempts: s.Attempts}
	if r := s.Result; r != nil {
		out.Result = &resultJSON{CallResult: *r, Transcript: sqldb.JSONText(r.Transcript), Metadata: sqldb.JSONText(r.Metadata)}
	}
	return json.Marshal(out)
}

// DecodeCallSnapshot reads the data of a call event recorded in format
// version.
func DecodeCallSnapshot(data []byte, version int) (CallSnapshot, error) {
	var in snapshotJSON
	if err := sqldb.DecodeSnapshot(data, version, SnapshotVersion, "call snapshot", &in); err != nil {
		return CallSnapshot{}, err
	}
	c := in.Call.Call
	c.RetryPolicy, c.Window, c.Metadata, c.CallMetadata = sqldb.RawJSON(in.Call.RetryPolicy), sqldb.RawJSON(in.Call.Window),
		sqldb.RawJSON(in.Call.Metadata), sqldb.RawJSON(in.Call.CallMetadata)
	s := CallSnapshot{Call: c, Attempts: in.Attempts}
	if r := in.Result; r != nil {
		res := r.CallResult
		res.Transcript, res.Metadata = sqldb.RawJSON(r.Transcript), sqldb.RawJSON(r.Metadata)
		s.Result = &res
	}
	return s, nil
}

// DecodeBatchSummary reads the data of a batch.completed event recorded in
// format version.
func DecodeBatchSummary(data []byte, version int) (BatchSummary, error) {
	var s BatchSummary
	err := sqldb.DecodeSnapshot(data, version, SnapshotVersion, "batch snapshot", &s)
	return s, err
}
