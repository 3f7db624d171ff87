package agents

import (
	"strconv"
	"strings"
)

// Site is one entry of a chat agent's allowedDomains: the page origins
// (scheme, host and port, as browsers send them in Origin) that may run
// its widget. What an entry leaves out is narrow, never "any": no scheme
// is http or https, no port is the scheme's default (80, 443).
type Site struct {
	Scheme string // "http", "https"; "" either
	Host   string // lower case; "*.example.com" matches its subdomains
	Port   int    // 0: the scheme's default
}

// ParseSite reads an allowedDomains entry, [scheme://]host[:port]:
// "example.com", "*.example.com", "https://shop.example.com",
// "http://localhost:8123", "example.com:8443". No path, user or query.
func ParseSite(entry string) (Site, bool) {
	e := strings.ToLower(strings.TrimSpace(entry))
	var s Site
	if sch, rest, ok := strings.Cut(e, "://"); ok {
		if sch != "http" && sch != "https" {
			return Site{}, false
		}
		s.Scheme, e = sch, rest
	}
	if h, p, ok := strings.Cut(e, ":"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p[0] == '0' || p[0] == '+' {
			return Site{}, false
		}
		s.Port, e = n, h
	}
	if !validDomain(e) {
		return Site{}, false
	}
	s.Host = e
	return s, true
}

// DefaultPort is a web scheme's port when an origin names none.
func DefaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// Match reports whether a page origin (scheme, lower-case host, port with
// the default filled in) is this entry's.
func (s Site) Match(scheme, host string, port int) bool {
	if s.Scheme != "" && s.Scheme != scheme {
		return false
	}
	want := s.Port
	if want == 0 {
		want = DefaultPort(scheme)
	}
	if port != want {
		return false
	}
	if rest, ok := strings.CutPrefix(s.Host, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return host == s.Host
}
