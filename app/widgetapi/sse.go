package widgetapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// sse writes server-sent events, sending the headers with the first.
type sse struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	open bool
}

func newSSE(w http.ResponseWriter) *sse { return &sse{w: w, rc: http.NewResponseController(w)} }

func (e *sse) event(name string, v any) {
	if !e.open {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		e.w.WriteHeader(http.StatusOK)
		e.open = true
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, bytes.TrimRight(buf.Bytes(), "\n"))
	e.rc.Flush()
}
