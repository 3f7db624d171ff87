package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/app/access"
)

// page is what every template gets: the layout's parts and the page's Data.
type page struct {
	Title  string
	Nav    string // the active navigation entry
	User   user
	Notice string // a success message after a form (from ?notice=)
	Error  string
	Data   any
}

// Can reports whether the signed-in user's role holds a capability
// ("agent:write"): templates show an action only when it does.
func (p page) Can(capability string) bool {
	return p.User.OrgID != "" && access.Can(p.User.Role, capability)
}

// CSRF is the session's token for the forms' hidden field.
func (p page) CSRF() string { return p.User.CSRFToken }

// pageTemplate is one page parsed with the layout.
type pageTemplate struct{ t *template.Template }

// parsePages parses every page template with the layout and partials.
func parsePages(funcs template.FuncMap) (map[string]*pageTemplate, error) {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	base := template.New("layout").Funcs(funcs)
	if _, err := base.ParseFS(files, "templates/layout.html"); err != nil {
		return nil, err
	}
	out := map[string]*pageTemplate{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(files, n); err != nil {
			return nil, fmt.Errorf("web: template %s: %w", n, err)
		}
		out[name] = &pageTemplate{t}
	}
	return out, nil
}

// render writes a page with the security headers every page carries. The
// page is rendered to a buffer first, so a template error is a clean 500.
func (s *Site) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	if p.Notice == "" && r.Method == http.MethodGet {
		p.Notice = requestNotice(r)
	}
	var buf bytes.Buffer
	t := s.pages[name]
	if t == nil {
		s.cfg.Log.Error("dashboard: no template", "name", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.t.ExecuteTemplate(&buf, "layout", p); err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "dashboard: render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
		"connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// funcs are the helpers templates use.
func (s *Site) funcs() template.FuncMap {
	return template.FuncMap{
		"when":   s.when,
		"deref":  deref,
		"join":   strings.Join,
		"label":  label,
		"pretty": pretty,
		"add":    func(a, b int) int { return a + b },
		"mul100": func(f float64) float64 { return f * 100 },
		"short": func(id string) string {
			if len(id) > 13 {
				return id[:8] + "…"
			}
			return id
		},
		"pct": func(a, b int) string {
			if b == 0 {
				return "–"
			}
			return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + " %"
		},
		"seconds": func(d *float64) string {
			if d == nil {
				return "–"
			}
			return (time.Duration(*d * float64(time.Second))).Round(100 * time.Millisecond).String()
		},
		"score": func(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) },
		"bytes": func(n int) string {
			if n < 1024 {
				return strconv.Itoa(n) + " B"
			}
			return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
		},
	}
}

// when formats a time (time.Time, *time.Time, or the API's RFC 3339
// string) in the site's zone; zero and nil are a dash.
func (s *Site) when(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x != nil {
			t = *x
		}
	case string:
		t, _ = time.Parse(time.RFC3339Nano, x)
	case *string:
		if x != nil {
			t, _ = time.Parse(time.RFC3339Nano, *x)
		}
	}
	if t.IsZero() {
		return "–"
	}
	return t.In(s.cfg.Location).Format("2006-01-02 15:04:05")
}

// deref is a *string's value, "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// label is a status or enum value in words: no_answer -> no answer.
func label(s string) string { return strings.ReplaceAll(s, "_", " ") }

// pretty indents JSON for display; null and {} are a dash.
func pretty(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" || t == "{}" || t == "[]" {
		return "–"
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return t
	}
	return buf.String()
}

// pager is the navigation of a paginated list. With a total it says
// "first–last of total"; without one (HasMore lists) only whether a next
// page exists.
type pager struct {
	Total   int // -1 when unknown
	First   int // 1-based index of the first item shown (0 when none)
	Last    int
	PrevURL string
	NextURL string
}

// pageParams reads the offset of a list page; the limit is the page's.
func pageParams(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("offset"))
	if err != nil || n < 0 {
		return 0
	}
	return min(n, 1_000_000)
}

// newPager builds the links of a page of n items at offset; total -1 means
// unknown, with more telling whether a next page exists.
func newPager(r *http.Request, offset, limit, n, total int, more bool) pager {
	p := pager{Total: total}
	if n > 0 {
		p.First, p.Last = offset+1, offset+n
	}
	if total >= 0 {
		more = offset+n < total
	}
	link := func(off int) string {
		q := r.URL.Query()
		q.Del("notice")
		q.Del("ns")
		if off <= 0 {
			q.Del("offset")
		} else {
			q.Set("offset", strconv.Itoa(off))
		}
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		return u.String()
	}
	if offset > 0 {
		p.PrevURL = link(max(offset-limit, 0))
	}
	if more {
		p.NextURL = link(offset + limit)
	}
	return p
}
