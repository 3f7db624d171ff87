package web

import (
	"io"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/kbstore"
)

const (
	collectionsPerPage = 25
	sourcesPerPage     = 50
	maxUpload          = 2 << 20 // a source's content limit (the API's body limit)
)

var sourceStatuses = []string{"pending", "processing", "completed", "failed"}

type collectionsData struct {
	Collections []kbstore.Collection
	Pager       pager
	Backlog     int
}

func (s *Site) collectionsPage(w http.ResponseWriter, r *http.Request, u user) error {
	offset := pageParams(r)
	cs, total, err := s.f.KB.ListCollections(r.Context(), u.OrgID, kb.Page{Limit: collectionsPerPage, Offset: offset})
	if err != nil {
		return err
	}
	backlog, err := s.cfg.Dashboard.OrgKBBacklog(r.Context(), u.OrgID)
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
	Collection kbstore.Collection
	Sources    []kbstore.Source
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
	d := collectionData{Collection: c, Sources: srcs, Status: st, Statuses: sourceStatuses, Form: f,
		Pager: newPager(r, offset, sourcesPerPage, len(srcs), total, false)}
	s.render(w, r, status, "collection", page{Title: c.Name, Nav: "knowledge", User: u, Error: msg, Data: d})
	return nil
}

// addSource adds or replaces a Markdown source, typed in or uploaded as a
// .md file (the file's name gives the title and external id when they are
// left empty).
func (s *Site) addSource(w http.ResponseWriter, r *http.Request, u user) error {
	f := sourceForm{ExternalID: strings.TrimSpace(r.PostFormValue("externalId")),
		Title: strings.TrimSpace(r.PostFormValue("title")), Content: r.PostFormValue("content")}
	if file, hdr, err := r.FormFile("file"); err == nil {
		defer file.Close()
		name := path.Base(strings.ReplaceAll(hdr.Filename, "\\", "/"))
		if ext := strings.ToLower(path.Ext(name)); ext != ".md" && ext != ".markdown" {
			return s.renderCollection(w, r, u, http.StatusBadRequest, "file: upload a Markdown file (.md)", f)
		}
		b, err := io.ReadAll(io.LimitReader(file, maxUpload+1))
		if err != nil {
			return errs.Wrap(errs.Invalid, "the upload could not be read", err)
		}
		if len(b) > maxUpload {
			return s.renderCollection(w, r, u, http.StatusRequestEntityTooLarge, "file: at most 2 MiB", f)
		}
		f.Content = string(b)
		stem := strings.TrimSuffix(name, path.Ext(name))
		if f.ExternalID == "" {
			f.ExternalID = name
		}
		if f.Title == "" {
			f.Title = stem
		}
	}
	res, err := s.f.KB.UpsertSource(r.Context(), u.OrgID, kb.SourceInput{CollectionID: r.PathValue("id"),
		ExternalID: &f.ExternalID, Title: &f.Title, Content: &f.Content})
	if err != nil {
		if errs.KindOf(err) == errs.Invalid || errs.KindOf(err) == errs.TooLarge {
			return s.renderCollection(w, r, u, s.status(err), err.(*errs.Error).Message, f)
		}
		return err
	}
	redirect(w, r, "/knowledge/"+r.PathValue("id"), res.Message+": "+f.ExternalID)
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
	Collection kbstore.Collection
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
