package agents

import (
	"strings"
	"testing"
)

// An entry allows what it names: without a scheme http and https, without
// a port the scheme's default; a named scheme or port is exact.
func TestSiteMatch(t *testing.T) {
	type origin struct {
		scheme, host string
		port         int
	}
	for entry, cases := range map[string]map[origin]bool{
		"shop.example.com": {
			{"https", "shop.example.com", 443}: true, {"http", "shop.example.com", 80}: true,
			{"http", "shop.example.com", 1}: false, {"https", "shop.example.com", 8443}: false,
			{"http", "shop.example.com", 443}: false, {"https", "a.shop.example.com", 443}: false,
		},
		"*.example.org": {
			{"https", "a.example.org", 443}: true, {"https", "a.b.example.org", 443}: true,
			{"https", "example.org", 443}: false, {"https", "evilexample.org", 443}: false,
			{"https", "a.example.org", 8443}: false,
		},
		"https://shop.example.com": {
			{"https", "shop.example.com", 443}: true, {"http", "shop.example.com", 80}: false,
		},
		"http://localhost:8123": {
			{"http", "localhost", 8123}: true, {"https", "localhost", 8123}: false, {"http", "localhost", 80}: false,
		},
		"example.com:8443": {
			{"https", "example.com", 8443}: true, {"http", "example.com", 8443}: true, {"https", "example.com", 443}: false,
		},
		"https://example.com:443": {{"https", "example.com", 443}: true},
	} {
		s, ok := ParseSite(entry)
		if !ok {
			t.Fatalf("%q refused", entry)
		}
		for o, want := range cases {
			if got := s.Match(o.scheme, o.host, o.port); got != want {
				t.Errorf("%q for %s://%s:%d: %v, want %v", entry, o.scheme, o.host, o.port, got, want)
			}
		}
	}
	for _, bad := range []string{"", "ftp://x.com", "https://x.com/", "x.com:0", "x.com:65536", "x.com:08", "x.com:+8",
		"https://user@x.com", "x.com?a", "*.", "https://", "a..b", "x.com:80:80", "*.*.x.com"} {
		if _, ok := ParseSite(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseSite: any entry is refused or gives a site whose host is a
// plain name and whose port is a port, never a panic.
func FuzzParseSite(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "https://a.example.com:8443", "http://localhost:1", "x.com:99999", "https://[::1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		s, ok := ParseSite(entry)
		if !ok {
			return
		}
		if strings.ContainsAny(s.Host, "/:?#@[] ") || s.Port < 0 || s.Port > 65535 || s.Scheme != "" && s.Scheme != "http" && s.Scheme != "https" {
			t.Fatalf("%q gave %+v", entry, s)
		}
	})
}
