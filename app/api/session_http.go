package api

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
)

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

func (s *Server) login(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := s.crossOrigin.Check(r); err != nil {
		return errs.Wrap(errs.Forbidden, "cross-origin request refused", err)
	}
	var body loginBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	if body.Email == "" || body.Password == "" {
		return errs.New(errs.Invalid, "email and password are required")
	}
	st, err := s.access.Login(r.Context(), body.Email, body.Password, body.Organization, httpx.ClientAddr(r), s.now())
	if err != nil {
		return err
	}
	return s.started(w, st)
}

// started sets the cookie of a new session and answers who signed in.
func (s *Server) started(w http.ResponseWriter, st access.Started) error {
	s.setSessionCookie(w, st.Token)
	ss := st.Session
	httpx.WriteJSON(w, http.StatusOK, s.envelope(meView{CSRFToken: ss.CSRFToken,
		Organization: orgView{ID: ss.OrgID, Name: ss.OrgName},
		User:         userView{ID: ss.UserID, Email: ss.Email, Role: ss.Role}}))
	return nil
}

type setupBody struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

func (s *Server) setup(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := s.crossOrigin.Check(r); err != nil {
		return errs.Wrap(errs.Forbidden, "cross-origin request refused", err)
	}
	var body setupBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	st, err := s.access.CompleteSetup(r.Context(), body.Token, body.Password, s.now())
	if err != nil {
		return err
	}
	return s.started(w, st)
}

type logoutBody struct {
	Everywhere bool `json:"everywhere"`
}

type logoutView struct {
	SignedOut int64 `json:"signedOut"`
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
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
		n, err = s.access.LogoutEverywhere(r.Context(), p.UserID)
	} else {
		err = s.access.Logout(r.Context(), p.Session)
	}
	if err != nil {
		return err
	}
	s.setSessionCookie(w, "")
	httpx.WriteJSON(w, http.StatusOK, s.envelope(logoutView{SignedOut: n}))
	return nil
}

func (s *Server) me(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	p := httpx.PrincipalOf(r.Context())
	u, err := s.stores.Orgs.UserByID(r.Context(), p.OrgID, p.UserID)
	if err != nil {
		return err
	}
	o, err := s.stores.Orgs.FindOrg(r.Context(), p.OrgID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.envelope(meView{CSRFToken: p.CSRF, Organization: orgView{ID: o.ID, Name: o.Name},
		User: userView{ID: u.ID, Email: u.Email, Role: u.Role}}))
	return nil
}

type memberListView struct {
	Count   int        `json:"count"`
	Members []userView `json:"members"`
}

func newUserView(u orgstore.User) userView {
	return userView{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: formatTime(u.CreatedAt)}
}

func actor(r *http.Request) access.Actor {
	p := httpx.PrincipalOf(r.Context())
	return access.Actor{UserID: p.UserID, Role: p.Role}
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	us, err := s.access.Members(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	out := make([]userView, 0, len(us))
	for _, u := range us {
		out = append(out, newUserView(u))
	}
	httpx.WriteJSON(w, http.StatusOK, s.envelope(memberListView{Count: len(out), Members: out}))
	return nil
}

type memberBody struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

func (s *Server) addMember(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body memberBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	if body.Role == "" {
		body.Role = "member"
	}
	u, err := s.access.AddMember(r.Context(), actor(r), httpx.OrgID(r), strings.TrimSpace(body.Email), body.Role)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, s.envelope(newUserView(u)))
	return nil
}

func (s *Server) updateMember(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var body memberBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	u, err := s.access.ChangeRole(r.Context(), actor(r), httpx.OrgID(r), p.ByName("id"), body.Role)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.envelope(newUserView(u)))
	return nil
}

type memberRemovedView struct {
	ID      string `json:"id"`
	Removed bool   `json:"removed"`
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if err := s.access.RemoveMember(r.Context(), actor(r), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.envelope(memberRemovedView{ID: p.ByName("id"), Removed: true}))
	return nil
}
