package widget

import (
	"net/url"
	"strings"
)

// OriginHost is the host name of an Origin header ("https://a.example.com:8443"
// gives "a.example.com"); "" when it is absent, "null" or not a web origin.
func OriginHost(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}

// Allowed reports whether host is listed: an exact name, or under a
// "*.example.com" entry (its subdomains, as Intercom and Crisp read it;
// list example.com too for the bare domain). An empty list allows none.
func Allowed(domains []string, host string) bool {
	if host == "" {
		return false
	}
	for _, d := range domains {
		d = strings.ToLower(d)
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}
