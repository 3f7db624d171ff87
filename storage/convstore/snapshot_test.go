package convstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sampleSnapshot is an ended conversation whose documents are set, empty
// and nil.
func sampleSnapshot() Snapshot {
	at := time.UnixMilli(1_700_000_000_123).UTC()
	return Snapshot{
		Conversation: Conversation{ID: "v1", OrgID: "o", AgentID: "a", Channel: "api", Status: "ended",
			Metadata: json.RawMessage(`{"k": [1, 2]}`), MessageCount: 2, CreatedAt: at, UpdatedAt: at, EndedAt: &at},
		Messages: []Message{
			{ID: "m1", ConversationID: "v1", Seq: 1, Role: "user", Content: "<hi>", Citations: json.RawMessage(``), CreatedAt: at},
			{ID: "m2", ConversationID: "v1", Seq: 2, Role: "assistant", Content: "hello",
				ToolCalls: json.RawMessage(`[{"name": "x"}]`), Usage: json.RawMessage(`{"tokens":3}`), CreatedAt: at},
		},
	}
}

// A recorded snapshot reads back as it was: JSON documents byte for byte
// (spacing kept, empty apart from nil); a started one without messages.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, in := range []Snapshot{sampleSnapshot(), {Conversation: sampleSnapshot().Conversation}} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DecodeSnapshot(b, SnapshotVersion)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip:\n in  %+v\n out %+v", in, out)
		}
	}
	b, _ := json.Marshal(sampleSnapshot())
	if _, err := DecodeSnapshot(b, SnapshotVersion+1); err == nil {
		t.Fatal("an unknown format was read")
	}
}

// The stored form keeps each JSON document as a string of its text (null
// for none), which is what the events already recorded in format
// SnapshotVersion hold.
func TestSnapshotStoredForm(t *testing.T) {
	b, err := json.Marshal(sampleSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Metadata":"{\"k\": [1, 2]}"`, `"Citations":"","ToolCalls":null,"Usage":null`,
		`"Citations":null,"ToolCalls":"[{\"name\": \"x\"}]","Usage":"{\"tokens\":3}"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stored form %s\nlacks %s", b, want)
		}
	}
	if b, _ := json.Marshal(Snapshot{}); !strings.HasSuffix(string(b), `"Messages":null}`) {
		t.Errorf("a snapshot without messages is stored as %s, want Messages null", b)
	}
}
