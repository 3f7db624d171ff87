package calls

import "github.com/agentd/agentd/storage/callstore"

// A call's final statuses and its record, named here so callers above the
// features (the dashboard) need no storage package.
const (
	StatusCompleted = callstore.CallCompleted
	StatusNoAnswer  = callstore.CallNoAnswer
	StatusBusy      = callstore.CallBusy
	StatusFailed    = callstore.CallFailed
	StatusCancelled = callstore.CallCancelled
)

// Call is a call's record.
type Call = callstore.Call

// Final reports whether status is a final call status.
func Final(status string) bool { return callstore.CallFinal(status) }
