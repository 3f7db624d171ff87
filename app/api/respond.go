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
