package sessions

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
)

// Cookie holds the dashboard session token (never stored: the database
// keeps its SHA-256).
const Cookie = "agentd_session"

// Deps are what the sign-in, session and member handlers use.
type Deps struct {
	Access *access.Service
	Orgs   *orgstore.Orgs // the signed-in user and organization (me)
	// CrossOrigin refuses cross-site sign-ins.
	CrossOrigin *http.CrossOriginProtection
	// SecureCookie marks the session cookie Secure (the public URL is https).
	SecureCookie bool
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// userView is a user as the auth and members endpoints show it.
type userView struct {
	CreatedAt string `json:"createdAt,omitempty"`
	Email     string `json:"email"`
	ID        string `json:"id"`
	Role      string `json:"role"`
}

type orgView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// meView answers sign-in and GET /api/v2/auth/me; csrfToken only for a
// session (a key needs none).
type meView struct {
	CSRFToken    string   `json:"csrfToken,omitempty"`
	Organization orgView  `json:"organization"`
	User         userView `json:"user"`
}

type loginBody struct {
	Email        string `json:"email"`
	Password     string `json:"password"`
	Organization string `json:"organization"`
}

func (h *Handlers) Login(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := h.d.CrossOrigin.Check(r); err != nil {
		return errs.Wrap(errs.Forbidden, "cross-origin request refused", err)
	}
	var body loginBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	if body.Email == "" || body.Password == "" {
		return errs.New(errs.Invalid, "email and password are required")
	}
	st, err := h.d.Access.Login(r.Context(), body.Email, body.Password, body.Organization, httpx.ClientAddr(r), httpx.Now())
	if err != nil {
		return err
	}
	return h.started(w, st)
}

// started sets the cookie of a new session and answers who signed in.
func (h *Handlers) started(w http.ResponseWriter, st access.Started) error {
	h.setCookie(w, st.Token)
	ss := st.Session
	httpx.WriteData(w, http.StatusOK, (meView{CSRFToken: ss.CSRFToken,
		Organization: orgView{ID: ss.OrgID, Name: ss.OrgName},
		User:         userView{ID: ss.UserID, Email: ss.Email, Role: ss.Role}}))
	return nil
}

type setupBody struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

func (h *Handlers) Setup(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := h.d.CrossOrigin.Check(r); err != nil {
		return errs.Wrap(errs.Forbidden, "cross-origin request refused", err)
	}
	var body setupBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	st, err := h.d.Access.CompleteSetup(r.Context(), body.Token, body.Password, httpx.Now())
	if err != nil {
		return err
	}
	return h.started(w, st)
}

type logoutBody struct {
	Everywhere bool `json:"everywhere"`
}

type logoutView struct {
	SignedOut int64 `json:"signedOut"`
}

func (h *Handlers) Logout(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body logoutBody
	if r.ContentLength != 0 {
		if err := httpx.Decode(r, &body); err != nil {
			return err
		}
	}
	p := httpx.PrincipalOf(r.Context())
	if p.Session == "" {
		return errs.New(errs.Invalid, "sign out ends a dashboard session: this request carries an API key (revoke keys with DELETE /api/v2/api-keys/{id})")
	}
	n := int64(1)
	var err error
	if body.Everywhere {
		n, err = h.d.Access.LogoutEverywhere(r.Context(), p.UserID)
	} else {
		err = h.d.Access.Logout(r.Context(), p.Session)
	}
	if err != nil {
		return err
	}
	h.setCookie(w, "")
	httpx.WriteData(w, http.StatusOK, logoutView{SignedOut: n})
	return nil
}

func (h *Handlers) Me(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	p := httpx.PrincipalOf(r.Context())
	u, err := h.d.Orgs.UserByID(r.Context(), p.OrgID, p.UserID)
	if err != nil {
		return err
	}
	o, err := h.d.Orgs.FindOrg(r.Context(), p.OrgID)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, (meView{CSRFToken: p.CSRF, Organization: orgView{ID: o.ID, Name: o.Name},
		User: userView{ID: u.ID, Email: u.Email, Role: u.Role}}))
	return nil
}

type memberListView struct {
	Count   int        `json:"count"`
	Members []userView `json:"members"`
}

func newUserView(u orgstore.User) userView {
	return userView{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: apitime.Format(u.CreatedAt)}
}

func actor(r *http.Request) access.Actor {
	p := httpx.PrincipalOf(r.Context())
	return access.Actor{UserID: p.UserID, Role: p.Role}
}

func (h *Handlers) ListMembers(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	us, err := h.d.Access.Members(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	out := make([]userView, 0, len(us))
	for _, u := range us {
		out = append(out, newUserView(u))
	}
	httpx.WriteData(w, http.StatusOK, memberListView{Count: len(out), Members: out})
	return nil
}

type memberBody struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

func (h *Handlers) AddMember(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body memberBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	if body.Role == "" {
		body.Role = "member"
	}
	u, err := h.d.Access.AddMember(r.Context(), actor(r), httpx.OrgID(r), strings.TrimSpace(body.Email), body.Role)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusCreated, newUserView(u))
	return nil
}

func (h *Handlers) UpdateMember(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var body memberBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	u, err := h.d.Access.ChangeRole(r.Context(), actor(r), httpx.OrgID(r), p.ByName("id"), body.Role)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, newUserView(u))
	return nil
}

type memberRemovedView struct {
	ID      string `json:"id"`
	Removed bool   `json:"removed"`
}

func (h *Handlers) RemoveMember(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if err := h.d.Access.RemoveMember(r.Context(), actor(r), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, memberRemovedView{ID: p.ByName("id"), Removed: true})
	return nil
}

// setCookie sends the session cookie (Secure when the public URL is
// https); an empty token clears it.
func (h *Handlers) setCookie(w http.ResponseWriter, token string) {
	c := &http.Cookie{Name: Cookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: h.d.SecureCookie}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.Expires = httpx.Now().Add(access.AbsoluteTimeout)
	}
	http.SetCookie(w, c)
}
