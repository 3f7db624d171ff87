package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/storage"
)

func (s *Server) upsertSource(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kbSourceBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.CollectionID == "" {
		return badRequest("collectionId is required")
	}
	in, fe := body.validate()
	if fe != nil {
		return badRequest(fe.reason)
	}
	c, err := s.collection(r, body.CollectionID)
	if err != nil {
		return err
	}
	res, err := s.db.UpsertSource(r.Context(), orgID(r), c.ID, in)
	if err != nil {
		return err
	}
	status, msg := "processing", "Source queued for chunking and embedding"
	if res.Status == storage.SourceUnchanged {
		status, msg = "unchanged", "Content unchanged; nothing reprocessed"
	} else {
		s.kb.worker.Wake()
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"documentId": res.DocumentID,
		"externalId": in.ExternalID, "status": status, "message": msg}, "meta": s.meta()})
	return nil
}

func (s *Server) batchSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return kbReadErr(err)
	}
	req, err := parseKBBatch(body)
	if err != nil {
		return err
	}
	c, err := s.collection(r, req.CollectionID)
	if err != nil {
		return err
	}
	results := make([]map[string]any, len(req.Sources))
	counts := map[string]int{}
	for i, in := range req.Sources {
		// Items apply in order, each in its own transaction: a repeated
		// externalId updates what the earlier item wrote, and one failing
		// item leaves the others standing.
		res, err := s.db.UpsertSource(r.Context(), orgID(r), c.ID, in)
		item := map[string]any{"externalId": in.ExternalID, "documentId": res.DocumentID, "status": res.Status}
		if err != nil {
			s.log.ErrorContext(r.Context(), "batch source failed", append(logAttrs(r), "externalId", in.ExternalID, "err", err)...)
			item = map[string]any{"externalId": in.ExternalID, "documentId": "", "status": "failed", "error": "could not store the source"}
			res.Status = "failed"
		}
		counts[res.Status]++
		results[i] = item
	}
	if counts[storage.SourceCreated]+counts[storage.SourceUpdated] > 0 {
		s.kb.worker.Wake()
	}
	summary := map[string]any{"total": len(results), "created": counts[storage.SourceCreated],
		"updated": counts[storage.SourceUpdated], "unchanged": counts[storage.SourceUnchanged], "failed": counts["failed"]}
	msg := fmt.Sprintf("Processed %d sources: %d created, %d updated, %d unchanged, %d failed", len(results),
		counts[storage.SourceCreated], counts[storage.SourceUpdated], counts[storage.SourceUnchanged], counts["failed"])
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"results": results, "summary": summary,
		"message": msg}, "meta": s.meta()})
	return nil
}

// kbReadErr maps a body read error like decodeJSON does.
func kbReadErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large (max %d bytes)", mbe.Limit))
	}
	return badRequest("could not read request body")
}

var kbStatuses = map[string]bool{"pending": true, "processing": true, "completed": true, "failed": true}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q := r.URL.Query()
	limit, offset, err := kbPageParams(r)
	if err != nil {
		return err
	}
	f := storage.SourceFilter{ExternalID: q.Get("externalId"), Status: q.Get("status"), Limit: limit, Offset: offset}
	if f.Status != "" && !kbStatuses[f.Status] {
		return badRequest("status must be one of pending, processing, completed, failed")
	}
	c, err := s.collection(r, q.Get("collectionId"))
	if err != nil {
		return err
	}
	srcs, total, err := s.db.ListSources(r.Context(), c.ID, f)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(srcs))
	for i, src := range srcs {
		out[i] = map[string]any{"id": src.ID, "externalId": src.ExternalID, "title": src.Title, "status": src.Status,
			"chunkCount": src.ChunkCount, "fileSize": src.FileSize, "error": src.Error, "contentRole": src.ContentRole,
			"createdAt": formatTime(src.CreatedAt), "updatedAt": formatTime(src.UpdatedAt), "metadata": json.RawMessage(src.Metadata)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"sources": out,
		"pagination": kbPagination(total, limit, offset)}, "meta": s.meta()})
	return nil
}

func (s *Server) deleteSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body struct {
		CollectionID string   `json:"collectionId"`
		ExternalIDs  []string `json:"externalIds"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	switch {
	case body.CollectionID == "":
		return badRequest("collectionId is required")
	case body.ExternalIDs == nil:
		return badRequest("externalIds is required")
	case len(body.ExternalIDs) < 1 || len(body.ExternalIDs) > kbMaxDelete:
		return badRequest(fmt.Sprintf("externalIds must hold 1 to %d items, got %d", kbMaxDelete, len(body.ExternalIDs)))
	}
	seen := map[string]bool{}
	ids := make([]string, 0, len(body.ExternalIDs))
	for i, id := range body.ExternalIDs {
		if id == "" {
			return badRequest(fmt.Sprintf("externalIds.%d: externalId is required", i))
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	c, err := s.collection(r, body.CollectionID)
	if err != nil {
		return err
	}
	deleted, notFound, err := s.db.DeleteSources(r.Context(), c.ID, ids)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"deleted": len(deleted), "deletedExternalIds": deleted,
		"notFound": notFound, "message": fmt.Sprintf("Deleted %d sources, %d not found", len(deleted), len(notFound))},
		"meta": s.meta()})
	return nil
}
