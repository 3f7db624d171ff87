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
	c := Claims{OrgID: "o", AgentID: "a", ConversationID: "c", Expires: now.Add(time.Hour).Unix()}
	tok := sign(key, c)
	if got, err := verify(key, tok, now); err != nil || got != c {
		t.Fatalf("verify: %+v %v", got, err)
	}
	for name, bad := range map[string]string{
		"other key":  sign([]byte("other"), c),
		"no dot":     strings.ReplaceAll(tok, ".", ""),
		"bit flip":   tok[:len(tok)-1] + map[bool]string{true: "A", false: "B"}[!strings.HasSuffix(tok, "A")],
		"empty":      "",
		"claims cut": sign(key, Claims{OrgID: "o", AgentID: "a", Expires: c.Expires}),
	} {
		if _, err := verify(key, bad, now); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if _, err := verify(key, tok, now.Add(time.Hour)); err == nil {
		t.Error("expired token verified")
	}
}

// Origins: the host of a web origin, matched exactly or under "*.".
func TestAllowed(t *testing.T) {
	ds := []string{"shop.example.com", "*.example.org", "localhost"}
	for origin, want := range map[string]bool{
		"https://shop.example.com":      true,
		"https://SHOP.example.com:8443": true,
		"https://example.com":           false,
		"https://a.example.org":         true,
		"https://a.b.example.org":       true,
		"https://example.org":           false,
		"https://evilexample.org":       false,
		"http://localhost:3000":         true,
		"http://localhost.evil.test":    false,
		"null":                          false,
		"":                              false,
		"file:///etc/passwd":            false,
		"https://shop.example.com/path": false,
	} {
		if got := Allowed(ds, OriginHost(origin)); got != want {
			t.Errorf("%q: %v, want %v", origin, got, want)
		}
	}
	if Allowed(nil, "localhost") {
		t.Error("an empty list allowed a host")
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

// FuzzOriginHost: any Origin header gives a host or "", never a panic, and
// a host never holds a scheme, port or path.
func FuzzOriginHost(f *testing.F) {
	for _, s := range []string{"https://a.example.com:8443", "null", "http://[::1]:80", "https://x/y", "javascript:alert(1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, origin string) {
		h := OriginHost(origin)
		if strings.ContainsAny(h, "/:?#@") && !strings.Contains(origin, "[") {
			t.Fatalf("%q gave host %q", origin, h)
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
