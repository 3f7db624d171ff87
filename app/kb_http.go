package app

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/storage/kbstore"
)

// kbMeta is the {timestamp} every knowledge response carries.
type kbMeta struct {
	Timestamp string `json:"timestamp"`
}

// kbEnvelope is the {data, meta} body of every knowledge response.
type kbEnvelope[T any] struct {
	Data T      `json:"data"`
	Meta kbMeta `json:"meta"`
}

// writeKB sends data in the knowledge envelope.
func writeKB[T any](s *Server, w http.ResponseWriter, status int, data T) {
	writeJSON(w, status, kbEnvelope[T]{Data: data, Meta: kbMeta{Timestamp: formatTime(s.now())}})
}

// kbCollection is a collection as the API shows it.
type kbCollection struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	SourceCount int      `json:"sourceCount"`
	SearchAlpha *float64 `json:"searchAlpha"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
}

func viewCollection(c kbstore.Collection) kbCollection {
	return kbCollection{ID: c.ID, Name: c.Name, Description: c.Description, SourceCount: c.SourceCount,
		SearchAlpha: c.SearchAlpha, CreatedAt: formatTime(c.CreatedAt), UpdatedAt: formatTime(c.UpdatedAt)}
}

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.CollectionInput
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	c, err := s.kb.Create(r.Context(), orgID(r), body)
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusCreated, viewCollection(c))
	return nil
}

func (s *Server) updateCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var body kb.CollectionPatch
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	c, err := s.kb.UpdateCollection(r.Context(), orgID(r), p.ByName("id"), body)
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusOK, viewCollection(c))
	return nil
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q := r.URL.Query()
	page, err := kb.ParsePage(q.Get("limit"), q.Get("offset"))
	if err != nil {
		return err
	}
	cs, total, err := s.kb.ListCollections(r.Context(), orgID(r), page)
	if err != nil {
		return err
	}
	out := struct {
		Collections []kbCollection `json:"collections"`
		Pagination  kb.Pagination  `json:"pagination"`
	}{make([]kbCollection, len(cs)), page.Of(total)}
	for i, c := range cs {
		out.Collections[i] = viewCollection(c)
	}
	writeKB(s, w, http.StatusOK, out)
	return nil
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	c, err := s.kb.Collection(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusOK, viewCollection(c))
	return nil
}

// kbDeleted is the body of a deleted collection.
type kbDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
	Message string `json:"message"`
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	c, err := s.kb.DeleteCollection(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusOK, kbDeleted{ID: c.ID, Deleted: true, Message: "collection and its sources deleted"})
	return nil
}

func (s *Server) upsertSource(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.SourceInput
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	res, err := s.kb.UpsertSource(r.Context(), orgID(r), body)
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusOK, res)
	return nil
}

func (s *Server) batchSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.BatchInput
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	res, err := s.kb.UpsertBatch(r.Context(), orgID(r), body)
	if err != nil {
		return err
	}
	for _, it := range res.Results {
		if it.Err != nil {
			s.log.ErrorContext(r.Context(), "batch source failed", append(logAttrs(r), "externalId", it.ExternalID, "err", it.Err)...)
		}
	}
	writeKB(s, w, http.StatusOK, res)
	return nil
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q := r.URL.Query()
	page, err := kb.ParsePage(q.Get("limit"), q.Get("offset"))
	if err != nil {
		return err
	}
	srcs, total, err := s.kb.ListSources(r.Context(), orgID(r), kb.SourceQuery{CollectionID: q.Get("collectionId"),
		ExternalID: q.Get("externalId"), Status: q.Get("status"), Page: page})
	if err != nil {
		return err
	}
	out := struct {
		Sources    []kb.SourceView `json:"sources"`
		Pagination kb.Pagination   `json:"pagination"`
	}{make([]kb.SourceView, len(srcs)), page.Of(total)}
	for i, src := range srcs {
		out.Sources[i] = kb.ViewOf(src)
	}
	writeKB(s, w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.DeleteInput
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	res, err := s.kb.DeleteSources(r.Context(), orgID(r), body)
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusOK, res)
	return nil
}

// kbResults is the body of a search.
type kbResults struct {
	Results []kb.Result `json:"results"`
}

func (s *Server) searchKB(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.SearchInput
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	res, err := s.kb.Search(r.Context(), orgID(r), body)
	if err != nil {
		return err
	}
	writeKB(s, w, http.StatusOK, kbResults{Results: res})
	return nil
}
