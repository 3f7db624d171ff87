package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// timeNow is the moment a response is built (UTC).
type timeNow = time.Time

// timeLayout is RFC 3339 in UTC with millisecond precision, as every
// timestamp the API sends.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// formatTime formats t in UTC with milliseconds: 2026-11-22T10:04:05.123Z.
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

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
