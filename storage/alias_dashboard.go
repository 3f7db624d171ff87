package storage

// The dashboard store (storage/dashstore): its types under their storage
// names.

import (
	"time"

	"github.com/agentd/agentd/storage/dashstore"
)

// CallOverview is the state of an organization's calls at a glance.
type CallOverview = dashstore.CallOverview

// HourCount is the number of calls of one final status that ended in one hour
// (Hour is the hour's start, UTC).
type HourCount = dashstore.HourCount

// BatchProgress is where one batch of calls stands.
type BatchProgress = dashstore.BatchProgress

// CategoryCount is one listing category and how many listings it holds ("" is
// the listings without a category).
type CategoryCount = dashstore.CategoryCount

// HistoryCall is a call row with its outcome, for SeedHistory.
type HistoryCall = dashstore.HistoryCall

// WeekOfCalls makes n calls of one agent spread over the week before now,
// deterministic, with a working day's shape (busy from 8 to 20, quiet at
// night and at the weekend): mostly ended (completed, no answer, busy,
// failed, cancelled), a few queued, scheduled or being dialled, and two calls
// in five in batches of 500.
func WeekOfCalls(orgID, agentID string, n int, now time.Time) []HistoryCall {
	return dashstore.WeekOfCalls(orgID, agentID, n, now)
}
