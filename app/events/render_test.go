package events

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// An event leaves the process with its resource's public view, rendered
// from the snapshot its transaction recorded; a body stored as it is sent
// (version 0: pings, events logged before snapshots) is sent unchanged; a
// snapshot this build cannot read still names its resource.
func TestRender(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000).UTC()
	snap := callstore.CallSnapshot{Call: callstore.Call{ID: "c1", OrgID: "o", Status: callstore.CallQueued, PhoneNumber: "+14155550100",
		DueAt: at, CreatedAt: at, UpdatedAt: at, Metadata: json.RawMessage(`{"crm":"<x>"}`)}, Attempts: []callstore.CallAttempt{}}
	data, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(calls.EventView(snap))
	if err != nil {
		t.Fatal(err)
	}
	got := Render(sqldb.Event{Type: callstore.EventCallQueued, Subject: "call:c1", Data: data, Version: callstore.SnapshotVersion})
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal(want, &b) != nil || string(mustJSON(a)) != string(mustJSON(b)) {
		t.Fatalf("rendered %s, want %s", got, want)
	}
	if string(got) == string(data) {
		t.Fatal("the snapshot left the process as recorded")
	}
	if got := Render(sqldb.Event{Type: "webhook.ping", Data: json.RawMessage(`{"ping":true}`)}); string(got) != `{"ping":true}` {
		t.Fatalf("version 0: %s", got)
	}
	if got := Render(sqldb.Event{Type: callstore.EventCallQueued, Subject: "call:c1", Data: data, Version: 99}); string(got) != `{"id":"c1"}` {
		t.Fatalf("unknown format: %s", got)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
