package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentd/agentd/internal/apitime"
)

// timeNow is the moment a response is built (UTC).
type timeNow = time.Time

const timeLayout = apitime.Layout

// formatTime is the API timestamp format (apitime.Format).
func formatTime(t time.Time) string { return apitime.Format(t) }

// formatTimePtr formats an optional time, nil stays nil (JSON null).
func formatTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
}

// writeJSON writes v as the JSON response body with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"message":"Internal server error","status":500}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// meta is the {timestamp} object most envelopes carry.
func (s *Server) meta() map[string]any { return map[string]any{"timestamp": formatTime(s.now())} }
