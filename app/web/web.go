// Package web is the dashboard: server-rendered pages (html/template) and
// static files embedded in the binary. It is the only feature package that
// speaks HTTP, because it serves HTML; its pages call the feature packages
// (agents, calls, kb, listings, access) and storage's read-only aggregates.
// The package app registers its routes in the one route table and keeps
// them out of the OpenAPI document.
//
// Every page authenticates with the session cookie itself (a signed-out
// visitor is sent to /login), is scoped to the session's organization, and
// shows only the actions the role holds. A form that changes something
// carries the session's CSRF token in a hidden field and must pass Go's
// cross-origin check; an action the role lacks is refused with 403 even
// when the form is forged.
package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/internal/errs"
)

//go:embed templates/*.html static/*
var files embed.FS

// SessionCookie is the dashboard session's cookie (shared with the /v2 API).
const SessionCookie = "agentd_session"

// Config is what the pages need from the server process.
type Config struct {
	Log *slog.Logger
	// Access is sign-in, sessions, keys and members (app/features).
	Access *access.Service
	// Services are the feature services the pages call. A nil
	// Conversations or Analysis makes the pages say the engine is not wired.
	Services Services
	// Now is the clock (UTC); nil means time.Now.
	Now func() time.Time
	// Location is the time zone pages show times in and "today" is counted
	// in; nil means the server's local zone.
	Location *time.Location
	// SecureCookie marks the session cookie Secure (the public URL is https).
	SecureCookie bool
	// PublicURL is how browsers reach the server (the widget snippet's
	// origin); "" means the request's host.
	PublicURL string
	// CrossOrigin refuses cross-site state-changing requests.
	CrossOrigin *http.CrossOriginProtection
	// Explain is the HTTP status and client message of an error: the
	// server's one mapping from an error's kind (causes never show).
	Explain func(error) (status int, message string)
}

// Site serves the dashboard.
type Site struct {
	cfg   Config
	f     Services // the feature services the pages call
	pages map[string]*pageTemplate
}

// Route is one dashboard route for the server's route table. Path uses the
// router's syntax (/calls/:id); the handler reads parameters with
// r.PathValue.
type Route struct {
	Method  string
	Path    string
	Handler http.Handler
}

// New parses the templates (a broken template fails here, at start).
func New(cfg Config) (*Site, error) {
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.CrossOrigin == nil {
		cfg.CrossOrigin = http.NewCrossOriginProtection()
	}
	if cfg.Explain == nil {
		cfg.Explain = func(error) (int, string) { return http.StatusInternalServerError, "Internal server error" }
	}
	s := &Site{cfg: cfg, f: cfg.Services}
	var err error
	if s.pages, err = parsePages(s.funcs()); err != nil {
		return nil, err
	}
	return s, nil
}

// Services are the feature services the dashboard's pages call, given to
// New once they are built (app/features), so a Site is complete when made.
type Services struct {
	Agents        *agents.Service
	Calls         *calls.Service
	Analysis      *analysis.Service
	Conversations *conversations.Service
	DNC           *dnc.Service
	Settings      *settings.Service
	Events        *events.Service
	KB            *kb.Service
	Listings      *listings.Service
	Recordings    *recordings.Service
	Dashboard     *dashboard.Service // the pages' aggregates (the read model)
}

// Routes lists every dashboard route.
func (s *Site) Routes() []Route {
	static, _ := fs.Sub(files, "static")
	fileServer := http.StripPrefix("/static/", http.FileServerFS(static))
	rs := []Route{
		{"GET", "/static/*file", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/") {
				http.NotFound(w, r) // no directory listings
				return
			}
			w.Header().Set("Cache-Control", "public, max-age=3600")
			fileServer.ServeHTTP(w, r)
		})},
		// Browsers ask for /favicon.ico on every page whatever the page
		// links; an SVG answers it (every current browser draws one).
		{"GET", "/favicon.ico", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/svg+xml")
			w.Header().Set("Cache-Control", "public, max-age=86400")
			b, _ := files.ReadFile("static/favicon.svg")
			w.Write(b)
		})},
		{"GET", "/login", http.HandlerFunc(s.loginPage)},
		{"POST", "/login", http.HandlerFunc(s.loginSubmit)},
		{"GET", "/setup", http.HandlerFunc(s.setupPage)},
		{"POST", "/setup", http.HandlerFunc(s.setupSubmit)},
		{"POST", "/logout", s.action("", s.logout)},

		{"GET", "/", s.view(s.overview)},
		{"GET", "/calls", s.view(s.callsPage)},
		{"GET", "/calls/:id", s.view(s.callPage)},
		{"POST", "/calls/:id/cancel", s.action(access.CapCallsWrite, s.cancelCall)},
		{"POST", "/calls", s.action(access.CapCallsWrite, s.placeCall)},
		{"GET", "/calls/new", s.view(s.newCallPage)},
		{"GET", "/batches", s.view(s.batchesPage)},
		{"POST", "/batches", s.action(access.CapCallsWrite, s.startCampaign)},
		{"GET", "/batches/new", s.view(s.newCampaignPage)},
		{"GET", "/batches/:id", s.view(s.campaignPage)},
		{"POST", "/batches/:id/pause", s.action(access.CapCallsWrite, s.pauseCampaign)},
		{"POST", "/batches/:id/resume", s.action(access.CapCallsWrite, s.resumeCampaign)},
		{"POST", "/batches/:id/cancel", s.action(access.CapCallsWrite, s.cancelCampaign)},

		{"GET", "/dnc", s.view(s.dncPage)},
		{"POST", "/dnc", s.action(access.CapCallsWrite, s.addDNC)},
		{"POST", "/dnc/remove", s.action(access.CapCallsWrite, s.removeDNC)},
		{"POST", "/dnc/import", s.action(access.CapCallsWrite, s.importDNC)},
		{"GET", "/webhooks", s.viewCap(access.CapWebhookManage, s.webhooksPage)},
		{"POST", "/webhooks", s.action(access.CapWebhookManage, s.createWebhook)},
		{"GET", "/webhooks/:id", s.viewCap(access.CapWebhookManage, s.webhookPage)},
		{"POST", "/webhooks/:id/rotate", s.action(access.CapWebhookManage, s.rotateWebhook)},
		{"POST", "/webhooks/:id/enabled", s.action(access.CapWebhookManage, s.enableWebhook)},
		{"POST", "/webhooks/:id/delete", s.action(access.CapWebhookManage, s.deleteWebhook)},
		{"POST", "/webhooks/:id/test", s.action(access.CapWebhookManage, s.testWebhook)},
		{"POST", "/webhooks/:id/deliveries/:delivery/retry", s.action(access.CapWebhookManage, s.retryDelivery)},
		{"GET", "/events", s.viewCap(access.CapEventsRead, s.eventsPage)},
		{"GET", "/settings", s.view(s.settingsPage)},
		{"POST", "/settings", s.action(access.CapSettingsManage, s.saveSettings)},

		{"GET", "/agents", s.view(s.agentsPage)},
		{"GET", "/agents/new", s.view(s.newAgentPage)},
		{"POST", "/agents", s.action(access.CapAgentWrite, s.createAgent)},
		{"GET", "/agents/:id", s.view(s.agentPage)},
		{"POST", "/agents/:id", s.action(access.CapAgentWrite, s.updateAgent)},
		{"POST", "/agents/:id/delete", s.action(access.CapAgentWrite, s.deleteAgent)},
		{"POST", "/agents/:id/jobs", s.action(access.CapAgentWrite, s.createJob)},
		{"POST", "/jobs/:id", s.action(access.CapAgentWrite, s.updateJob)},
		{"POST", "/jobs/:id/delete", s.action(access.CapAgentWrite, s.deleteJob)},

		{"GET", "/knowledge", s.view(s.collectionsPage)},
		{"POST", "/knowledge", s.action(access.CapKBWrite, s.createCollection)},
		{"GET", "/knowledge/:id", s.view(s.collectionPage)},
		{"POST", "/knowledge/:id/delete", s.action(access.CapKBWrite, s.deleteCollection)},
		{"POST", "/knowledge/:id/sources", s.action(access.CapKBWrite, s.addSource)},
		{"POST", "/knowledge/:id/web", s.action(access.CapKBWrite, s.addWebSource)},
		{"POST", "/knowledge/:id/sources/delete", s.action(access.CapKBWrite, s.deleteSource)},
		{"GET", "/knowledge/:id/search", s.view(s.searchPage)},

		{"GET", "/listings", s.view(s.listingsPage)},

		{"GET", "/conversations", s.view(s.conversationsPage)},
		{"GET", "/conversations/:id", s.view(s.conversationPage)},

		{"GET", "/keys", s.viewCap(access.CapAPIKeyManage, s.keysPage)},
		{"POST", "/keys", s.action(access.CapAPIKeyManage, s.createKey)},
		{"POST", "/keys/:id/revoke", s.action(access.CapAPIKeyManage, s.revokeKey)},

		{"GET", "/members", s.view(s.membersPage)},
		{"POST", "/members", s.action(access.CapMemberManage, s.addMember)},
		{"POST", "/members/:id", s.action(access.CapMemberManage, s.changeRole)},
		{"POST", "/members/:id/remove", s.action(access.CapMemberManage, s.removeMember)},
	}
	return rs
}

// user is the signed-in user of a page request.
type user struct {
	access.Session
	token string
}

// can reports whether the user's role holds a capability.
func (u user) can(capability string) bool { return access.Can(u.Role, capability) }

type userKey struct{}

func userFrom(ctx context.Context) user {
	u, _ := ctx.Value(userKey{}).(user)
	return u
}

// authenticate resolves the session cookie; ok is false when signed out.
func (s *Site) authenticate(r *http.Request) (user, bool, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return user{}, false, nil
	}
	sess, err := s.cfg.Access.Authenticate(r.Context(), c.Value, s.cfg.Now())
	if errs.Is(err, errs.Unauthenticated) {
		return user{}, false, nil
	}
	if err != nil {
		return user{}, false, err
	}
	return user{Session: sess, token: c.Value}, true, nil
}

// pageFunc renders a page or returns an error to render instead.
type pageFunc func(w http.ResponseWriter, r *http.Request, u user) error

// view wraps a GET page: signed-out visitors go to /login and come back.
func (s *Site) view(h pageFunc) http.Handler { return s.viewCap("", h) }

// viewCap is a page that needs a capability to be seen at all.
func (s *Site) viewCap(capability string, h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, user{}, err)
			return
		}
		if !ok {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		s.run(w, r, u, capability, h)
	})
}

// action wraps a form POST: signed in, same origin, the session's CSRF
// token, and the capability (403 otherwise, whatever the form says).
func (s *Site) action(capability string, h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.cfg.CrossOrigin.Check(r); err != nil {
			s.fail(w, r, user{}, errs.Wrap(errs.Forbidden, "cross-origin request refused", err))
			return
		}
		u, ok, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, user{}, err)
			return
		}
		if !ok {
			s.fail(w, r, user{}, errs.New(errs.Unauthenticated, "you are signed out: sign in again"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := parseForm(r); err != nil {
			s.fail(w, r, u, err)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(u.CSRFToken)) != 1 {
			s.fail(w, r, u, errs.New(errs.Forbidden, "the form is stale or forged (bad CSRF token): reload the page and try again"))
			return
		}
		s.run(w, r, u, capability, h)
	})
}

// run checks that u holds the capability (none: any signed-in user) and
// runs h for u.
func (s *Site) run(w http.ResponseWriter, r *http.Request, u user, capability string, h pageFunc) {
	if capability != "" && !u.can(capability) {
		s.fail(w, r, u, errForbidden(u, capability))
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
	if err := h(w, r, u); err != nil {
		s.fail(w, r, u, err)
	}
}

// maxForm bounds a form body: a file upload of up to 20 MiB (the knowledge
// base's limit) and its fields; past 4 MiB the parts go to temporary files.
const maxForm = 21 << 20

// parseForm reads an urlencoded or multipart form.
func parseForm(r *http.Request) error {
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(4 << 20)
	} else {
		err = r.ParseForm()
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errs.New(errs.TooLarge, "the form is too large (max 21 MiB)")
	}
	if err != nil {
		return errs.Wrap(errs.Invalid, "the form could not be read", err)
	}
	return nil
}

func errForbidden(u user, capability string) error {
	return errs.New(errs.Forbidden, "your role ("+u.Role+") may not do this: it needs "+capability)
}

// fail renders an error page with the error's status and client message;
// the causes of server errors are logged, never shown.
func (s *Site) fail(w http.ResponseWriter, r *http.Request, u user, err error) {
	st, msg := s.cfg.Explain(err)
	if st >= 500 {
		s.cfg.Log.ErrorContext(r.Context(), "dashboard page failed", "path", r.URL.Path, "err", err)
	}
	if st == http.StatusUnauthorized && r.Method == http.MethodGet {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	s.render(w, r, st, "error", page{Title: http.StatusText(st), User: u, Error: msg})
}

// redirect answers a successful form with 303 to a page, with a notice.
func redirect(w http.ResponseWriter, r *http.Request, path, notice string) {
	if notice != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "notice=" + url.QueryEscape(notice) + "&ns=" + noticeMAC(notice)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// status is the HTTP status of an error.
func (s *Site) status(err error) int {
	st, _ := s.cfg.Explain(err)
	return st
}

// asErr is errors.As for the feature packages' error type.
func asErr(err error, e **errs.Error) bool { return errors.As(err, e) }

func itoa(n int) string { return strconv.Itoa(n) }
