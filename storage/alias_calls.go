package storage

// The calls store (storage/callstore): its types, statuses and errors under
// their storage names, so callers keep writing storage.Call.

import "github.com/agentd/agentd/storage/callstore"

// Batch is a batch of calls run as a campaign, with the figures of its calls.
type Batch = callstore.Batch

// BatchFilter selects batches for ListBatches; empty fields do not filter.
type BatchFilter = callstore.BatchFilter

// Call is one call record.
type Call = callstore.Call

// CallFilter selects and orders calls for ListCalls.
type CallFilter = callstore.CallFilter

// CallAttempt is one dial attempt of a call.
type CallAttempt = callstore.CallAttempt

// Undo says what becomes of a claimed attempt that is not dialled after all.
type Undo = callstore.Undo

// InboundEnd is how an inbound call ended.
type InboundEnd = callstore.InboundEnd

// Claim identifies one claim of a call attempt.
type Claim = callstore.Claim

// Progress is a non-final step of a claimed attempt.
type Progress = callstore.Progress

// Outcome is how a claimed attempt ended, and what happens next.
type Outcome = callstore.Outcome

// CallResult is what the voice agent reported about a call.
type CallResult = callstore.CallResult

// DNCEntry is one listed number.
type DNCEntry = callstore.DNCEntry

// OrgSettings are an organization's settings.
type OrgSettings = callstore.OrgSettings

// SeedCall is a bare call row for tests and benchmarks of the agent views.
type SeedCall = callstore.SeedCall

// Constants of callstore.
const (
	BatchRunning     = callstore.BatchRunning
	BatchPaused      = callstore.BatchPaused
	BatchCompleted   = callstore.BatchCompleted
	BatchCancelled   = callstore.BatchCancelled
	CallInitiated    = callstore.CallInitiated
	CallScheduled    = callstore.CallScheduled
	CallQueued       = callstore.CallQueued
	CallConnecting   = callstore.CallConnecting
	CallRinging      = callstore.CallRinging
	CallActive       = callstore.CallActive
	CallCompleted    = callstore.CallCompleted
	CallFailed       = callstore.CallFailed
	CallCancelled    = callstore.CallCancelled
	CallNoAnswer     = callstore.CallNoAnswer
	CallBusy         = callstore.CallBusy
	OutcomeVoicemail = callstore.OutcomeVoicemail
	ReasonDoNotCall  = callstore.ReasonDoNotCall
)

// Errors of callstore.
var (
	ErrBatchState     = callstore.ErrBatchState
	ErrCallFinished   = callstore.ErrCallFinished
	ErrCallNotDialled = callstore.ErrCallNotDialled
)

// CallFinal reports whether status is a final call status.
func CallFinal(status string) bool { return callstore.CallFinal(status) }

// Budget is the dial budget of one trunk shared by every process.
type Budget = callstore.Budget

// Slot is the start a budgeted claim took.
type Slot = callstore.Slot

// Claimed is the answer of ClaimCall.
type Claimed = callstore.Claimed
