package api

import (
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

// meta is the {timestamp} object most envelopes carry.
func (s *Server) meta() map[string]any { return map[string]any{"timestamp": formatTime(s.now())} }
