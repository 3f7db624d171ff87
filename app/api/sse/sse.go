// Package sse writes server-sent events: the conversation API, the
// OpenAI-compatible endpoint and the chat widget stream answers with it.
package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// Writer writes server-sent events, sending the headers with the first.
type Writer struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	open bool
}

// New starts a stream on w; nothing is written before the first event.
func New(w http.ResponseWriter) *Writer { return &Writer{w: w, rc: http.NewResponseController(w)} }

// Open reports whether an event was sent (the status is then written: a
// later error goes into the stream, not into a status).
func (e *Writer) Open() bool { return e.open }

// Event sends one event and flushes it. A string v is sent as the data
// as is; anything else as JSON without HTML escaping, as the API encodes.
// Name "" sends data only, as OpenAI does.
func (e *Writer) Event(name string, v any) {
	if !e.open {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		e.w.WriteHeader(http.StatusOK)
		e.open = true
	}
	if s, ok := v.(string); ok {
		fmt.Fprintf(e.w, "data: %s\n\n", s)
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		if name != "" {
			fmt.Fprintf(e.w, "event: %s\n", name)
		}
		fmt.Fprintf(e.w, "data: %s\n\n", bytes.TrimRight(buf.Bytes(), "\n"))
	}
	e.rc.Flush()
}
