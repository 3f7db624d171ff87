// Package kb is the HTTP face of the knowledge base (app/kb): collections,
// sources and search under /api/v1/kb. Package app/api keeps the route
// table, auth and the error mapping; this package decodes, calls one use
// case and writes, with app/api/httpx.
package kb

import (
	"log/slog"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/storage/kbstore"
)

// Deps are what the handlers use.
type Deps struct {
	KB  *kb.Service
	Log *slog.Logger
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers over the service.
func New(d Deps) *Handlers { return &Handlers{d: d} }

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
func writeKB[T any](h *Handlers, w http.ResponseWriter, status int, data T) {
	httpx.WriteJSON(w, status, kbEnvelope[T]{Data: data, Meta: kbMeta{Timestamp: apitime.Format(httpx.Now())}})
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
		SearchAlpha: c.SearchAlpha, CreatedAt: apitime.Format(c.CreatedAt), UpdatedAt: apitime.Format(c.UpdatedAt)}
}

func (h *Handlers) CreateCollection(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.CollectionInput
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	c, err := h.d.KB.Create(r.Context(), httpx.OrgID(r), body)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusCreated, viewCollection(c))
	return nil
}

func (h *Handlers) UpdateCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var body kb.CollectionPatch
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	c, err := h.d.KB.UpdateCollection(r.Context(), httpx.OrgID(r), p.ByName("id"), body)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, viewCollection(c))
	return nil
}

func (h *Handlers) ListCollections(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q := r.URL.Query()
	page, err := kb.ParsePage(q.Get("limit"), q.Get("offset"))
	if err != nil {
		return err
	}
	cs, total, err := h.d.KB.ListCollections(r.Context(), httpx.OrgID(r), page)
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
	writeKB(h, w, http.StatusOK, out)
	return nil
}

func (h *Handlers) GetCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	c, err := h.d.KB.Collection(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, viewCollection(c))
	return nil
}

// kbDeleted is the body of a deleted collection.
type kbDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
	Message string `json:"message"`
}

func (h *Handlers) DeleteCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	c, err := h.d.KB.DeleteCollection(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, kbDeleted{ID: c.ID, Deleted: true, Message: "collection and its sources deleted"})
	return nil
}

func (h *Handlers) UpsertSource(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.SourceInput
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	res, err := h.d.KB.UpsertSource(r.Context(), httpx.OrgID(r), body)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, res)
	return nil
}

func (h *Handlers) BatchSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.BatchInput
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	res, err := h.d.KB.UpsertBatch(r.Context(), httpx.OrgID(r), body)
	if err != nil {
		return err
	}
	for _, it := range res.Results {
		if it.Err != nil {
			h.d.Log.ErrorContext(r.Context(), "batch source failed", append(httpx.LogAttrs(r), "externalId", it.ExternalID, "err", it.Err)...)
		}
	}
	writeKB(h, w, http.StatusOK, res)
	return nil
}

func (h *Handlers) ListSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q := r.URL.Query()
	page, err := kb.ParsePage(q.Get("limit"), q.Get("offset"))
	if err != nil {
		return err
	}
	srcs, total, err := h.d.KB.ListSources(r.Context(), httpx.OrgID(r), kb.SourceQuery{CollectionID: q.Get("collectionId"),
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
	writeKB(h, w, http.StatusOK, out)
	return nil
}

func (h *Handlers) DeleteSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.DeleteInput
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	res, err := h.d.KB.DeleteSources(r.Context(), httpx.OrgID(r), body)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, res)
	return nil
}

// kbResults is the body of a search.
type kbResults struct {
	Results []kb.Result `json:"results"`
}

func (h *Handlers) SearchKB(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body kb.SearchInput
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	res, err := h.d.KB.Search(r.Context(), httpx.OrgID(r), body)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, kbResults{Results: res})
	return nil
}
