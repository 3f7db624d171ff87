package callstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Lines are appended in order, read back whole, rendered into the call's
// result; concurrent appends to one call number after each other.
func TestAppendTranscript(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	id := q.add(callstore.CallInitiated, 0, 0)[0]
	at := q.now
	if err := q.AppendTranscript(ctx, id, []callstore.TranscriptLine{
		{Role: "agent", Text: "Hello", At: at},
		{Role: "user", Text: "Hi", At: at.Add(time.Second)},
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := q.AppendTranscript(ctx, id, []callstore.TranscriptLine{{Role: "agent", Text: fmt.Sprint("line ", i), At: at, Interrupted: true}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	lines, err := q.Transcript(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 10 || lines[0].Text != "Hello" || lines[1].Role != "user" || !lines[1].At.Equal(at.Add(time.Second)) || !lines[9].Interrupted {
		t.Fatalf("lines: %+v", lines)
	}
	res, err := q.GetCallResult(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := json.Unmarshal(res.Transcript, &items); err != nil || len(items) != 10 || items[0]["text"] != "Hello" ||
		items[0]["interrupted"] != nil || items[9]["interrupted"] != true {
		t.Fatalf("result transcript %s (%v)", res.Transcript, err)
	}
	if err := q.AppendTranscript(ctx, "nope", []callstore.TranscriptLine{{Role: "agent", Text: "x", At: at}}); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("unknown call: %v", err)
	}
}

// A worker's posted transcript is the call's transcript; lines stop at
// MaxTranscriptLines.
func TestTranscriptPostedAndCapped(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	ids := q.add(callstore.CallQueued, 0, 0)
	if _, ok := q.claim("w"); !ok {
		t.Fatal("no claim")
	}
	id := ids[0]
	many := make([]callstore.TranscriptLine, callstore.MaxTranscriptLines+5)
	for i := range many {
		many[i] = callstore.TranscriptLine{Role: "user", Text: strings.Repeat("x", 3), At: q.now}
	}
	if err := q.AppendTranscript(ctx, id, many); err != nil {
		t.Fatal(err)
	}
	if lines, err := q.Transcript(ctx, id); err != nil || len(lines) != callstore.MaxTranscriptLines {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	posted := json.RawMessage(`[{"role":"agent","text":"final","at":"2026-01-01T00:00:00.000Z"}]`)
	if err := q.SaveCallResult(ctx, q.org, callstore.CallResult{CallID: id, Transcript: posted}, q.now); err != nil {
		t.Fatal(err)
	}
	res, err := q.GetCallResult(ctx, id)
	if err != nil || string(res.Transcript) != string(posted) {
		t.Fatalf("%s, %v", res.Transcript, err)
	}
}
