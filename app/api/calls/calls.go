package calls

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	analysisapi "github.com/agentd/agentd/app/api/analysis"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/internal/errs"
)

// The call endpoints: each decodes, makes one call into app/calls and
// encodes its typed answer. Errors go to app/api's writeError (FamilyCalls).

// Deps are what the call handlers use.
type Deps struct {
	Calls      *calls.Service
	Analysis   *analysisapi.Handlers // a call is answered with its analysis
	Recordings *recordings.Service   // voice calls' audio
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Data is an answer {data}.
type Data[T any] struct {
	Data T `json:"data"`
}

// DataMessage is an answer {data, message}.
type DataMessage[T any] struct {
	Data    T      `json:"data"`
	Message string `json:"message"`
}

// callsBatchAnswer is the answer of POST /api/v1/calls/batch: when no call
// was scheduled it carries the error next to the per-call results.
type callsBatchAnswer struct {
	Data    calls.BatchData `json:"data"`
	Error   *ErrorBody      `json:"error,omitempty"`
	Message string          `json:"message"`
}

// caller is who makes the request, as the calls feature needs it.
func caller(r *http.Request) calls.Caller {
	p := httpx.PrincipalOf(r.Context())
	return calls.Caller{OrgID: p.OrgID, Internal: p.Internal, CanOverride: access.Can(p.Role, access.CapSettingsManage)}
}

// scheduleCall is POST /api/v1/calls/schedule.
func (h *Handlers) ScheduleCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req calls.ScheduleRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	c, msg, err := h.d.Calls.Schedule(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, DataMessage[calls.Scheduled]{Data: c, Message: msg})
	return nil
}

// batchCalls is POST /api/v1/calls/batch: 201 when every call was
// scheduled, 207 when some failed, 400 when none was (the body then
// carries the per-call results next to the error); 200 for a dry run.
func (h *Handlers) BatchCalls(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req calls.BatchRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	out, err := h.d.Calls.Batch(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	ans := callsBatchAnswer{Data: out.Data, Message: out.Message}
	st := http.StatusCreated
	switch {
	case out.Data.DryRun:
		st = http.StatusOK // nothing was created
	case out.Failure != nil:
		body := ErrorOf(out.Failure)
		ans.Error, st = &body, body.Code
	case out.Data.Summary.PartialSuccess:
		st = http.StatusMultiStatus
	}
	httpx.WriteJSON(w, st, ans)
	return nil
}

// outboundCall is POST /api/v1/calls/outbound.
func (h *Handlers) OutboundCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req calls.OutboundRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	c, err := h.d.Calls.Outbound(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, DataMessage[calls.Queued]{Data: c, Message: "Call queued"})
	return nil
}

// listCalls is GET /api/v1/calls.
func (h *Handlers) ListCalls(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	page, err := h.d.Calls.ListQuery(r.Context(), httpx.OrgID(r), r.URL.Query())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, Data[calls.Page]{Data: page})
	return nil
}

// getCall is GET /api/v1/calls/{id}.
func (h *Handlers) GetCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, err := h.d.Calls.Get(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	out, err := h.d.Analysis.WithCall(r.Context(), httpx.OrgID(r), rec)
	if err != nil {
		return err
	}
	read := callRead{CallWithAnalysis: out}
	if h.d.Recordings.Has(httpx.OrgID(r), rec.ID) {
		read.RecordingURL = "/api/v1/calls/" + rec.ID + "/recording"
	}
	httpx.WriteJSON(w, http.StatusOK, Data[callRead]{Data: read})
	return nil
}

// callRead is GET /api/v1/calls/{id}'s call: with its analysis and the
// address of its recording when it has one.
type callRead struct {
	analysisapi.CallWithAnalysis
	RecordingURL string `json:"recordingUrl,omitempty"`
}

// Recording is GET /api/v1/calls/{id}/recording: the call's audio as a
// stereo WAV (caller left, agent right), with Range requests; 404 for a
// call of another organization or one without a recording.
func (h *Handlers) Recording(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, err := h.d.Calls.Get(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	f, _, err := h.d.Recordings.Open(r.Context(), httpx.OrgID(r), rec.ID)
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, rec.ID+".wav", time.Time{}, f)
	return nil
}

// cancelCall is DELETE /api/v1/calls/{id}.
func (h *Handlers) CancelCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, msg, err := h.d.Calls.Cancel(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, DataMessage[calls.Record]{Data: rec, Message: msg})
	return nil
}

// ErrorBody is the error object of the calls family, {code, message}
// (golden files pin the order); the batch answer embeds it too.
type ErrorBody struct {
	Code    int    `json:"code"` // the HTTP status
	Message string `json:"message"`
}

// ErrorAnswer is the calls family's error answer.
type ErrorAnswer struct {
	Error ErrorBody `json:"error"`
}

// ErrorOf is e as the calls family shows it.
func ErrorOf(e *errs.Error) ErrorBody { return ErrorBody{Code: httpx.StatusOf(e), Message: e.Message} }
