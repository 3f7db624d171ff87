package web

import (
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/errs"
)

const (
	collectionsPerPage = 25
	sourcesPerPage     = 50
)

var sourceStatuses = []string{"pending", "processing", "completed", "failed"}

type collectionsData struct {
	Collections []kb.Collection
	Pager       pager
	Backlog     int
}

func (s *Site) collectionsPage(w http.ResponseWriter, r *http.Request, u user) error {
	offset := pageParams(r)
	cs, total, err := s.f.KB.ListCollections(r.Context(), u.OrgID, kb.Page{Limit: collectionsPerPage, Offset: offset})
	if err != nil {
		return err
	}
	backlog, err := s.f.Dashboard.KBBacklog(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	d := collectionsData{Collections: cs, Pager: newPager(r, offset, collectionsPerPage, len(cs), total, false), Backlog: backlog}
	s.render(w, r, http.StatusOK, "knowledge", page{Title: "Knowledge", Nav: "knowledge", User: u, Data: d})
	return nil
}

func (s *Site) createCollection(w http.ResponseWriter, r *http.Request, u user) error {
	c, err := s.f.KB.CreateCollection(r.Context(), u.OrgID, strings.TrimSpace(r.PostFormValue("name")),
		strings.TrimSpace(r.PostFormValue("description")))
	if err != nil {
		return err
	}
	redirect(w, r, "/knowledge/"+c.ID, "Collection created")
	return nil
}

func (s *Site) deleteCollection(w http.ResponseWriter, r *http.Request, u user) error {
	c, err := s.f.KB.DeleteCollection(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	redirect(w, r, "/knowledge", "Collection "+c.Name+" deleted")
	return nil
}

// sourceForm is the add-source form as typed.
type sourceForm struct {
	ExternalID, Title, Content string
}

type collectionData struct {
	Collection kb.Collection
	Sources    []kb.Source
	Web        []kb.WebView
	Status     string
	Statuses   []string
	Pager      pager
	Form       sourceForm
}

func (s *Site) collectionPage(w http.ResponseWriter, r *http.Request, u user) error {
	return s.renderCollection(w, r, u, http.StatusOK, "", sourceForm{})
}

// renderCollection shows a collection's sources and the add-source form
// (again with what was typed, after a refusal).
func (s *Site) renderCollection(w http.ResponseWriter, r *http.Request, u user, status int, msg string, f sourceForm) error {
	c, err := s.f.KB.Collection(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	st := r.URL.Query().Get("status")
	if !slices.Contains(sourceStatuses, st) {
		st = ""
	}
	offset := pageParams(r)
	srcs, total, err := s.f.KB.ListSources(r.Context(), u.OrgID, kb.SourceQuery{CollectionID: c.ID, Status: st,
		Page: kb.Page{Limit: sourcesPerPage, Offset: offset}})
	if err != nil {
		return err
	}
	webs, err := s.f.KB.ListWeb(r.Context(), u.OrgID, c.ID)
	if err != nil {
		return err
	}
	d := collectionData{Collection: c, Sources: srcs, Web: webs, Status: st, Statuses: sourceStatuses, Form: f,
		Pager: newPager(r, offset, sourcesPerPage, len(srcs), total, false)}
	s.render(w, r, status, "collection", page{Title: c.Name, Nav: "knowledge", User: u, Error: msg, Data: d})
	return nil
}

// addSource adds or replaces a source: Markdown typed in, or a file
// uploaded or dropped on the page (PDF, Word, Excel, PowerPoint, HTML, CSV,
// text or Markdown), converted to Markdown by the knowledge base; the
// file's name fills an empty title and external id.
func (s *Site) addSource(w http.ResponseWriter, r *http.Request, u user) error {
	f := sourceForm{ExternalID: strings.TrimSpace(r.PostFormValue("externalId")),
		Title: strings.TrimSpace(r.PostFormValue("title")), Content: r.PostFormValue("content")}
	if file, hdr, err := r.FormFile("file"); err == nil {
		defer file.Close()
		name := path.Base(strings.ReplaceAll(hdr.Filename, "\\", "/"))
		b, err := io.ReadAll(io.LimitReader(file, kb.MaxUploadBytes+1))
		if err != nil {
			return errs.Wrap(errs.Invalid, "the upload could not be read", err)
		}
		title := f.Title
		if title == "" {
			title = strings.TrimSuffix(name, path.Ext(name))
		}
		res, err := s.f.KB.Upload(r.Context(), u.OrgID, kb.UploadInput{CollectionID: r.PathValue("id"), ExternalID: f.ExternalID,
			Title: title, FileName: name, ContentType: hdr.Header.Get("Content-Type"), Data: b})
		if err != nil {
			return s.refused(w, r, u, err, f)
		}
		redirect(w, r, "/knowledge/"+r.PathValue("id"), res.Message+": "+res.ExternalID)
		return nil
	}
	res, err := s.f.KB.UpsertSource(r.Context(), u.OrgID, kb.SourceInput{CollectionID: r.PathValue("id"),
		ExternalID: &f.ExternalID, Title: &f.Title, Content: &f.Content})
	if err != nil {
		return s.refused(w, r, u, err, f)
	}
	redirect(w, r, "/knowledge/"+r.PathValue("id"), res.Message+": "+f.ExternalID)
	return nil
}

// refused shows the collection again with what was typed and why a write
// was refused; any other error is the page's.
func (s *Site) refused(w http.ResponseWriter, r *http.Request, u user, err error, f sourceForm) error {
	if k := errs.KindOf(err); k == errs.Invalid || k == errs.TooLarge || k == errs.BadGateway || k == errs.GatewayTimeout {
		return s.renderCollection(w, r, u, s.status(err), err.(*errs.Error).Message, f)
	}
	return err
}

// addWebSource adds a page fetched from a URL, refreshed every interval
// if one is chosen, or a crawl of the site from it.
func (s *Site) addWebSource(w http.ResponseWriter, r *http.Request, u user) error {
	in := kb.URLInput{CollectionID: r.PathValue("id"), URL: strings.TrimSpace(r.PostFormValue("url"))}
	if v := strings.TrimSpace(r.PostFormValue("refresh")); v != "" {
		in.RefreshInterval = []byte(strconv.Quote(v))
	}
	if r.PostFormValue("crawl") != "" {
		n, _ := strconv.Atoi(r.PostFormValue("maxPages"))
		in.Crawl = &kb.CrawlInput{MaxPages: n}
	}
	res, err := s.f.KB.AddURL(r.Context(), u.OrgID, in)
	if err != nil {
		return s.refused(w, r, u, err, sourceForm{})
	}
	redirect(w, r, "/knowledge/"+r.PathValue("id"), res.Message+": "+res.ExternalID)
	return nil
}

func (s *Site) deleteSource(w http.ResponseWriter, r *http.Request, u user) error {
	ext := r.PostFormValue("externalId")
	if _, err := s.f.KB.DeleteSources(r.Context(), u.OrgID, kb.DeleteInput{CollectionID: r.PathValue("id"),
		ExternalIDs: []string{ext}}); err != nil {
		return err
	}
	redirect(w, r, "/knowledge/"+r.PathValue("id"), "Source "+ext+" deleted")
	return nil
}

type searchData struct {
	Collection kb.Collection
	Query      string
	Mode       string
	Modes      []string
	Searched   bool
	Results    []kb.Result
}

// searchPage is the playground: a query over one collection, showing each
// chunk with its heading path, score and the ranking that found it.
func (s *Site) searchPage(w http.ResponseWriter, r *http.Request, u user) error {
	c, err := s.f.KB.Collection(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := searchData{Collection: c, Query: q.Get("q"), Mode: q.Get("mode"), Modes: []string{kb.ModeHybrid, kb.ModeKeyword, kb.ModeSemantic}}
	if !slices.Contains(d.Modes, d.Mode) {
		d.Mode = kb.ModeHybrid
	}
	p := page{Title: "Search " + c.Name, Nav: "knowledge", User: u, Data: &d}
	status := http.StatusOK
	if strings.TrimSpace(d.Query) != "" {
		limit := 10
		d.Results, err = s.f.KB.Search(r.Context(), u.OrgID, kb.SearchInput{CollectionID: c.ID, Query: &d.Query, Limit: &limit, Mode: d.Mode})
		var e *errs.Error
		if err != nil && (!asErr(err, &e) || e.Kind == errs.Internal) {
			return err
		}
		if err != nil {
			p.Error, status = e.Message, s.status(err)
		}
		d.Searched = err == nil
	}
	s.render(w, r, status, "search", p)
	return nil
}
