package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/errs"
)

// signInData fills the sign-in and setup forms again after a refusal.
type signInData struct {
	Email  string
	Next   string
	Token  string
	MinLen int
}

func (s *Site) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok, _ := s.authenticate(r); ok {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, "login", page{Title: "Sign in", Data: signInData{Next: r.URL.Query().Get("next")}})
}

// loginSubmit signs in with email and password. The error never says which
// of the two was wrong; failures are throttled by access.Login.
func (s *Site) loginSubmit(w http.ResponseWriter, r *http.Request) {
	if !s.anonymousForm(w, r) {
		return
	}
	d := signInData{Email: strings.TrimSpace(r.PostFormValue("email")), Next: r.PostFormValue("next")}
	st, err := s.cfg.Access.Login(r.Context(), d.Email, r.PostFormValue("password"), "", clientAddr(r), s.cfg.Now())
	if err != nil {
		s.refuse(w, r, "login", "Sign in", d, err)
		return
	}
	s.setCookie(w, st.Token)
	http.Redirect(w, r, safeNext(d.Next), http.StatusSeeOther)
}

func (s *Site) setupPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "setup", page{Title: "Set your password", Data: signInData{Token: r.URL.Query().Get("token"),
		MinLen: access.MinPasswordLen}})
}

// setupSubmit consumes the one-time setup token, sets the password and
// signs in.
func (s *Site) setupSubmit(w http.ResponseWriter, r *http.Request) {
	if !s.anonymousForm(w, r) {
		return
	}
	d := signInData{Token: r.PostFormValue("token"), MinLen: access.MinPasswordLen}
	if r.PostFormValue("password") != r.PostFormValue("confirm") {
		s.refuse(w, r, "setup", "Set your password", d, errs.New(errs.Invalid, "the two passwords differ"))
		return
	}
	st, err := s.cfg.Access.CompleteSetup(r.Context(), d.Token, r.PostFormValue("password"), s.cfg.Now())
	if err != nil {
		s.refuse(w, r, "setup", "Set your password", d, err)
		return
	}
	s.setCookie(w, st.Token)
	redirect(w, r, "/", "Password set: you are signed in")
}

// refuse shows a sign-in form again with the reason.
func (s *Site) refuse(w http.ResponseWriter, r *http.Request, name, title string, d signInData, err error) {
	if errs.KindOf(err) == errs.Internal {
		s.fail(w, r, user{}, err)
		return
	}
	var msg string
	if e, ok := err.(*errs.Error); ok {
		msg = e.Message
	} else {
		msg = err.Error()
	}
	s.render(w, r, s.status(err), name, page{Title: title, Error: msg, Data: d})
}

// logout ends this session, or with everywhere=1 every session of the user.
func (s *Site) logout(w http.ResponseWriter, r *http.Request, u user) error {
	var err error
	if r.PostFormValue("everywhere") != "" {
		_, err = s.cfg.Access.LogoutEverywhere(r.Context(), u.UserID)
	} else {
		err = s.cfg.Access.Logout(r.Context(), u.token)
	}
	if err != nil {
		return err
	}
	s.setCookie(w, "")
	redirect(w, r, "/login", "Signed out")
	return nil
}

// setCookie sends the session cookie; an empty token clears it.
func (s *Site) setCookie(w http.ResponseWriter, token string) {
	c := &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.cfg.SecureCookie}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.Expires = s.cfg.Now().Add(access.AbsoluteTimeout)
	}
	http.SetCookie(w, c)
}

// safeNext keeps a post-sign-in destination on this site: only a path.
// Browsers drop tabs and newlines from a Location and read a backslash as a
// slash, so "/\t/evil.com" is "//evil.com" to them: any character outside
// printable ASCII, a backslash, a scheme, a host or a path starting "//"
// (before or after decoding) sends the visitor home instead.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 || !plainPath(next) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || !plainPath(u.Path) {
		return "/"
	}
	return next
}

// plainPath reports whether s holds only printable ASCII without a
// backslash.
func plainPath(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// clientAddr is the client's IP address for sign-in throttling.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// anonymousForm reads the small form of a signed-out page (sign-in, setup)
// after the same-origin check; on a refusal it has answered.
func (s *Site) anonymousForm(w http.ResponseWriter, r *http.Request) bool {
	if err := s.cfg.CrossOrigin.Check(r); err != nil {
		s.fail(w, r, user{}, errs.Wrap(errs.Forbidden, "cross-origin request refused", err))
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, user{}, errs.Wrap(errs.Invalid, "the form could not be read", err))
		return false
	}
	return true
}
