package callstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A recorded snapshot reads back as it was: JSON documents byte for byte
// (spacing kept, empty apart from nil), times to the millisecond.
func TestCallSnapshotRoundTrip(t *testing.T) {
	in := sampleSnapshot()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeCallSnapshot(b, SnapshotVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in  %+v\n out %+v", in, out)
	}
	if out.Call.Window == nil || out.Call.RetryPolicy != nil || out.Result.Metadata != nil {
		t.Fatal("nil and empty documents were mixed up")
	}
	if _, err := DecodeCallSnapshot(b, SnapshotVersion+1); err == nil {
		t.Fatal("an unknown format was read")
	}
}

// sampleSnapshot is a finished call with documents that are set, empty
// and nil.
func sampleSnapshot() CallSnapshot {
	at := time.UnixMilli(1_700_000_000_123).UTC()
	sum, dur := "ok", 12.5
	return CallSnapshot{
		Call: Call{ID: "c1", OrgID: "o", Status: CallCompleted, DueAt: at, CreatedAt: at, UpdatedAt: at, EndedAt: &at,
			Metadata: json.RawMessage(`{"a": [1, 2]}`), Window: json.RawMessage(``), Duration: &dur},
		Attempts: []CallAttempt{{Attempt: 1, Status: CallCompleted, StartedAt: at, EndedAt: &at}},
		Result:   &CallResult{CallID: "c1", Summary: &sum, Transcript: json.RawMessage(`[{"role":"agent","text":"<hi>"}]`), CreatedAt: at},
	}
}

// The stored form keeps each JSON document as a string of its text (null
// for none), which is what the events already recorded in format
// SnapshotVersion hold.
func TestCallSnapshotStoredForm(t *testing.T) {
	b, err := json.Marshal(sampleSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Metadata":"{\"a\": [1, 2]}"`, `"Window":""`, `"RetryPolicy":null`, `"CallMetadata":null`,
		`"Transcript":"[{\"role\":\"agent\",\"text\":\"\u003chi\u003e\"}]","Metadata":null}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stored form %s\nlacks %s", b, want)
		}
	}
}
