// Package sse writes server-sent events: the conversation API, the
// OpenAI-compatible endpoint and the chat widget stream answers with it.
package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// WriteTimeout bounds each event's write: a client that stops reading
// fills the connection's buffers, and without a deadline the handler (and
// the model answer, the widget's answer slot) waited on it for ever. Past
// it the stream is dropped.
const WriteTimeout = 10 * time.Second

// Writer writes server-sent events, sending the headers with the first.
type Writer struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	open   bool
	failed bool
	onFail func()
}

// New starts a stream on w; nothing is written before the first event.
func New(w http.ResponseWriter) *Writer { return NewOnFail(w, nil) }

// NewOnFail is New with onFail (e.g. the turn's cancel), run once when a
// write fails or passes WriteTimeout: the client is gone or not reading.
func NewOnFail(w http.ResponseWriter, onFail func()) *Writer {
	return &Writer{w: w, rc: http.NewResponseController(w), onFail: onFail}
}

// Open reports whether an event was sent (the status is then written: a
// later error goes into the stream, not into a status).
func (e *Writer) Open() bool { return e.open }

// Failed reports whether a write failed: the stream is dropped and later
// events are not sent.
func (e *Writer) Failed() bool { return e.failed }

// Event sends one event and flushes it, within WriteTimeout. A string v is
// sent as the data as is; anything else as JSON without HTML escaping, as
// the API encodes. Name "" sends data only, as OpenAI does.
func (e *Writer) Event(name string, v any) {
	if e.failed {
		return
	}
	if !e.open {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	}
	var buf bytes.Buffer
	if s, ok := v.(string); ok {
		fmt.Fprintf(&buf, "data: %s\n\n", s)
	} else {
		var js bytes.Buffer
		enc := json.NewEncoder(&js)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		if name != "" {
			fmt.Fprintf(&buf, "event: %s\n", name)
		}
		fmt.Fprintf(&buf, "data: %s\n\n", bytes.TrimRight(js.Bytes(), "\n"))
	}
	// A recorder in tests has no deadlines: the write is then unbounded.
	deadline := e.rc.SetWriteDeadline(time.Now().Add(WriteTimeout)) == nil
	if !e.open {
		e.w.WriteHeader(http.StatusOK)
		e.open = true
	}
	_, err := e.w.Write(buf.Bytes())
	if err == nil {
		err = e.rc.Flush()
	}
	if err != nil {
		e.failed = true
		if e.onFail != nil {
			e.onFail()
		}
		return
	}
	if deadline {
		e.rc.SetWriteDeadline(time.Time{}) // the connection may serve another request
	}
}
