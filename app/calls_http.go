package app

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/analysisapi"
	"github.com/agentd/agentd/app/calls"
)

// The call endpoints: each decodes, makes one call into app/calls and
// encodes its typed answer. Errors go through writeError (FamilyCalls).

// callsState is the calls feature of the server (set by wireFeatures).
type callsState struct{ *calls.Service }

// callsData is an answer {data}.
type callsData[T any] struct {
	Data T `json:"data"`
}

// callsDataMessage is an answer {data, message}.
type callsDataMessage[T any] struct {
	Data    T      `json:"data"`
	Message string `json:"message"`
}

// callsBatchAnswer is the answer of POST /api/v1/calls/batch: when no call
// was scheduled it carries the error next to the per-call results.
type callsBatchAnswer struct {
	Data    calls.BatchData `json:"data"`
	Error   *callsErrorBody `json:"error,omitempty"`
	Message string          `json:"message"`
}

// caller is who makes the request, as the calls feature needs it.
func caller(r *http.Request) calls.Caller {
	p := principalFrom(r.Context())
	return calls.Caller{OrgID: p.OrgID, Internal: p.Internal, CanOverride: access.Can(p.Role, capSettingsManage)}
}

// scheduleCall is POST /api/v1/calls/schedule.
func (s *Server) scheduleCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req calls.ScheduleRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	c, msg, err := s.calls.Schedule(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, callsDataMessage[calls.Scheduled]{Data: c, Message: msg})
	return nil
}

// batchCalls is POST /api/v1/calls/batch: 201 when every call was
// scheduled, 207 when some failed, 400 when none was (the body then
// carries the per-call results next to the error); 200 for a dry run.
func (s *Server) batchCalls(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req calls.BatchRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	out, err := s.calls.Batch(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	ans := callsBatchAnswer{Data: out.Data, Message: out.Message}
	st := http.StatusCreated
	switch {
	case out.Data.DryRun:
		st = http.StatusOK // nothing was created
	case out.Failure != nil:
		body := callsError(out.Failure)
		ans.Error, st = &body, body.Code
	case out.Data.Summary.PartialSuccess:
		st = http.StatusMultiStatus
	}
	writeJSON(w, st, ans)
	return nil
}

// outboundCall is POST /api/v1/calls/outbound.
func (s *Server) outboundCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req calls.OutboundRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	c, err := s.calls.Outbound(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, callsDataMessage[calls.Queued]{Data: c, Message: "Call queued"})
	return nil
}

// listCalls is GET /api/v1/calls.
func (s *Server) listCalls(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	page, err := s.calls.ListQuery(r.Context(), orgID(r), r.URL.Query())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, callsData[calls.Page]{Data: page})
	return nil
}

// getCall is GET /api/v1/calls/{id}.
func (s *Server) getCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, err := s.calls.Get(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	out, err := s.analysis.WithCall(r.Context(), orgID(r), rec)
	if err != nil {
		return err
	}
	read := callRead{CallWithAnalysis: out}
	if s.f.Recordings.Has(orgID(r), rec.ID) {
		read.RecordingURL = "/api/v1/calls/" + rec.ID + "/recording"
	}
	writeJSON(w, http.StatusOK, callsData[callRead]{Data: read})
	return nil
}

// callRead is GET /api/v1/calls/{id}'s call: with its analysis and the
// address of its recording when it has one.
type callRead struct {
	analysisapi.CallWithAnalysis
	RecordingURL string `json:"recordingUrl,omitempty"`
}

// callRecording is GET /api/v1/calls/{id}/recording: the call's audio as
// a stereo WAV (caller left, agent right), with Range requests; 404 for a
// call of another organization or one without a recording.
func (s *Server) callRecording(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, err := s.calls.Get(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	f, _, err := s.f.Recordings.Open(r.Context(), orgID(r), rec.ID)
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
func (s *Server) cancelCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, msg, err := s.calls.Cancel(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, callsDataMessage[calls.Record]{Data: rec, Message: msg})
	return nil
}
