package kb

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/errs"
)

// UploadBodyLimit bounds POST /api/v1/kb/sources/upload: the largest file
// and its fields.
const UploadBodyLimit = kb.MaxUploadBytes + 1<<20

// sourceProbe tells a web source ({url} or {crawl}) from a Markdown one.
type sourceProbe struct {
	URL     *string         `json:"url"`
	Crawl   json.RawMessage `json:"crawl"`
	Content *string         `json:"content"`
}

// upsertFromURL answers POST /api/v1/kb/sources for a body with url or
// crawl: the page fetched now (or the crawl queued).
func (h *Handlers) upsertFromURL(w http.ResponseWriter, r *http.Request, body []byte) error {
	var in kb.URLInput
	if err := httpx.DecodeBytes(body, &in); err != nil {
		return err
	}
	res, err := h.d.KB.AddURL(r.Context(), httpx.OrgID(r), in)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, res)
	return nil
}

// isURLSource reports whether a source body names a url or a crawl; both
// with content is a 400.
func isURLSource(body []byte) (bool, error) {
	var p sourceProbe
	if json.Unmarshal(body, &p) != nil {
		return false, nil // the decoder names what is wrong
	}
	web := p.URL != nil || (len(p.Crawl) > 0 && string(p.Crawl) != "null")
	if web && p.Content != nil {
		return false, &errs.Error{Kind: errs.Invalid, Field: "url", Message: "give content or url, not both"}
	}
	return web, nil
}

// UploadSource is POST /api/v1/kb/sources/upload: a file (multipart field
// "file") converted to Markdown and written as a source; collectionId,
// externalId, title and metadata (a JSON object) are fields beside it.
func (h *Handlers) UploadSource(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		return &errs.Error{Kind: errs.Invalid, Field: "file", Message: "send the file as multipart/form-data with the field file"}
	}
	if err := r.ParseMultipartForm(4 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &errs.Error{Kind: errs.TooLarge, Field: "file", Message: fmt.Sprintf("file too large, max %d MB", kb.MaxUploadBytes>>20)}
		}
		return &errs.Error{Kind: errs.Invalid, Field: "file", Message: "the multipart body could not be read"}
	}
	defer r.MultipartForm.RemoveAll()
	file, hdr, err := r.FormFile("file")
	if err != nil {
		return &errs.Error{Kind: errs.Invalid, Field: "file", Message: "file is required"}
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, kb.MaxUploadBytes+1))
	if err != nil {
		return &errs.Error{Kind: errs.Invalid, Field: "file", Message: "the file could not be read"}
	}
	in := kb.UploadInput{CollectionID: r.FormValue("collectionId"), ExternalID: strings.TrimSpace(r.FormValue("externalId")),
		Title: strings.TrimSpace(r.FormValue("title")), FileName: path.Base(strings.ReplaceAll(hdr.Filename, "\\", "/")),
		ContentType: hdr.Header.Get("Content-Type"), Data: data}
	if in.CollectionID == "" {
		return &errs.Error{Kind: errs.Invalid, Field: "collectionId", Message: "collectionId is required"}
	}
	if m := r.FormValue("metadata"); m != "" {
		if err := json.Unmarshal([]byte(m), &in.Metadata); err != nil || in.Metadata == nil {
			return &errs.Error{Kind: errs.Invalid, Field: "metadata", Message: "metadata must be a JSON object"}
		}
	}
	res, err := h.d.KB.Upload(r.Context(), httpx.OrgID(r), in)
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, res)
	return nil
}

// ListWebSources is GET /api/v1/kb/web-sources?collectionId=: the
// collection's pages and crawls with their last fetch and error.
func (h *Handlers) ListWebSources(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ws, err := h.d.KB.ListWeb(r.Context(), httpx.OrgID(r), r.URL.Query().Get("collectionId"))
	if err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, struct {
		WebSources []kb.WebView `json:"webSources"`
	}{ws})
	return nil
}

// DeleteWebSource is DELETE /api/v1/kb/web-sources/{id}: refreshes stop;
// the sources it wrote stay.
func (h *Handlers) DeleteWebSource(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if err := h.d.KB.DeleteWeb(r.Context(), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	writeKB(h, w, http.StatusOK, struct {
		Deleted bool   `json:"deleted"`
		Message string `json:"message"`
	}{true, "Web source deleted; its sources stay"})
	return nil
}
