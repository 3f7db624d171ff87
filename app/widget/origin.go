package widget

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/agents"
)

// Origin is a page's web origin in one spelling, "scheme://host:port"
// with the default port written out ("https://a.example.com" gives
// "https://a.example.com:443"); "" when the header is absent, "null" or
// not an http(s) origin.
//
// The Origin check stops browsers, not scripts: a script sends any Origin
// it likes. Scripts are held by the visitor tokens and the limits.
func Origin(header string) string {
	u, err := url.Parse(header)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return ""
	}
	port := agents.DefaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return ""
		}
		port = n
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host + ":" + strconv.Itoa(port)
}

// splitOrigin reads back what Origin wrote.
func splitOrigin(origin string) (scheme, host string, port int, ok bool) {
	scheme, rest, ok := strings.Cut(origin, "://")
	if !ok {
		return "", "", 0, false
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", "", 0, false
	}
	port, err := strconv.Atoi(rest[i+1:])
	return scheme, rest[:i], port, err == nil
}

// Allowed reports whether the page origin (as Origin gives it) is listed:
// each entry is an agents.Site, matched on scheme, host and port ("*."
// for subdomains, as Intercom and Crisp read it; list example.com too for
// the bare domain). An empty list allows none.
func Allowed(domains []string, origin string) bool {
	scheme, host, port, ok := splitOrigin(origin)
	if !ok || host == "" {
		return false
	}
	for _, d := range domains {
		if s, ok := agents.ParseSite(d); ok && s.Match(scheme, host, port) {
			return true
		}
	}
	return false
}
