package widget

import (
	"strings"
	"testing"
	"time"
)

// Tokens: the signature covers the claims; expiry is checked; nothing
// but a token made with the key verifies.
func TestTokens(t *testing.T) {
	key := []byte("k")
	now := time.Unix(1_800_000_000, 0)
	c := Claims{OrgID: "o", AgentID: "a", ConversationID: "c", Expires: now.Add(time.Hour).Unix(), First: now.Add(-time.Hour).Unix()}
	tok := sign(key, c)
	if got, err := verify(key, tok, now); err != nil || got != c {
		t.Fatalf("verify: %+v %v", got, err)
	}
	for name, bad := range map[string]string{
		"other key":  sign([]byte("other"), c),
		"no dot":     strings.ReplaceAll(tok, ".", ""),
		"bit flip":   tok[:len(tok)-1] + map[bool]string{true: "A", false: "B"}[!strings.HasSuffix(tok, "A")],
		"empty":      "",
		"claims cut": sign(key, Claims{OrgID: "o", AgentID: "a", Expires: c.Expires, First: c.First}),
		"no first":   sign(key, Claims{OrgID: "o", AgentID: "a", ConversationID: "c", Expires: c.Expires}),
		"too old":    sign(key, Claims{OrgID: "o", AgentID: "a", ConversationID: "c", Expires: c.Expires, First: now.Add(-MaxVisitorLifetime).Unix()}),
	} {
		if _, err := verify(key, bad, now); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if _, err := verify(key, tok, now.Add(time.Hour)); err == nil {
		t.Error("expired token verified")
	}
}

// Origins: scheme, host and port, the default port written out; an
// allowedDomains entry without a scheme or port allows http and https on
// their default ports only.
func TestAllowed(t *testing.T) {
	ds := []string{"shop.example.com", "*.example.org", "http://localhost:3000", "https://pay.example.net:8443"}
	for origin, want := range map[string]bool{
		"https://shop.example.com":          true,
		"https://SHOP.example.com:443":      true,
		"http://shop.example.com":           true,
		"http://shop.example.com:1":         false,
		"https://shop.example.com:8443":     false,
		"https://example.com":               false,
		"https://a.example.org":             true,
		"https://a.b.example.org":           true,
		"https://a.example.org:444":         false,
		"https://example.org":               false,
		"https://evilexample.org":           false,
		"http://localhost:3000":             true,
		"https://localhost:3000":            false,
		"http://localhost":                  false,
		"http://localhost.evil.test":        false,
		"https://pay.example.net:8443":      true,
		"https://pay.example.net":           false,
		"http://pay.example.net:8443":       false,
		"null":                              false,
		"":                                  false,
		"file:///etc/passwd":                false,
		"https://shop.example.com/path":     false,
		"https://user@shop.example.com":     false,
		"https://shop.example.com:99999":    false,
		"https://shop.example.com.":         true,
		"https://shop.example.com?x=1":      false,
		"https://[::1]:443":                 false,
		"javascript://shop.example.com:443": false,
	} {
		if got := Allowed(ds, Origin(origin)); got != want {
			t.Errorf("%q (%q): %v, want %v", origin, Origin(origin), got, want)
		}
	}
	if o := Origin("https://Shop.Example.com"); o != "https://shop.example.com:443" {
		t.Errorf("origin spelled %q", o)
	}
	if Allowed(nil, "http://localhost:80") {
		t.Error("an empty list allowed an origin")
	}
}

// FuzzVerify: any text a visitor sends as a token is refused without a
// panic unless it is exactly a token signed with the key.
func FuzzVerify(f *testing.F) {
	key := []byte("fuzz-key")
	now := time.Unix(1_800_000_000, 0)
	good := sign(key, Claims{OrgID: "o", AgentID: "a", ConversationID: "c", Expires: now.Add(time.Hour).Unix()})
	f.Add(good)
	f.Add("e30.AAAA")
	f.Add("..")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := verify(key, tok, now)
		if err == nil && sign(key, c) != tok && tok != good {
			// A different encoding of the same claims would need the key.
			p, _, _ := strings.Cut(tok, ".")
			if sig := strings.SplitN(tok, ".", 2)[1]; b64.EncodeToString(mac(key, p)) != sig {
				t.Fatalf("verified a token not signed with the key: %q", tok)
			}
		}
	})
}

// FuzzOrigin: any Origin header gives "" or one spelling,
// scheme://host:port, that reads back as such; never a panic.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"https://a.example.com:8443", "null", "http://[::1]:80", "https://x/y", "javascript:alert(1)", "http://a:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		o := Origin(header)
		if o == "" {
			return
		}
		scheme, host, port, ok := splitOrigin(o)
		if !ok || scheme != "http" && scheme != "https" || host == "" || port < 1 || port > 65535 ||
			strings.ContainsAny(host, "/?#@ ") || Origin(o) != o {
			t.Fatalf("%q gave %q", header, o)
		}
	})
}

// Per-address limits count an IPv6 client by its /64.
func TestAddrKey(t *testing.T) {
	if addrKey("2001:db8:1:2:aaaa::1") != addrKey("2001:db8:1:2:bbbb::9") || addrKey("2001:db8:1:2::1") == addrKey("2001:db8:1:3::1") {
		t.Fatal("IPv6 clients are not grouped by /64")
	}
	if addrKey("192.0.2.7") != "192.0.2.7" || addrKey("192.0.2.7") == addrKey("192.0.2.8") {
		t.Fatal("IPv4 clients are grouped")
	}
}
