package safehttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers every name with fixed addresses (a DNS we control).
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, x := range s {
		out = append(out, netip.MustParseAddr(x))
	}
	return out
}

func TestAllowed(t *testing.T) {
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34", true}, {"2606:2800:220:1:248:1893:25c8:1946", true}, {"8.8.8.8", true},
		{"127.0.0.1", false}, {"127.9.9.9", false}, {"::1", false}, {"::ffff:127.0.0.1", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"169.254.0.1", false}, {"fe80::1", false},
		{"fc00::1", false}, {"fd00:ec2::254", false}, {"100.100.100.200", false}, {"100.64.0.1", false},
		{"0.0.0.0", false}, {"::", false}, {"224.0.0.1", false}, {"ff02::1", false}, {"255.255.255.255", false},
		{"64:ff9b::7f00:1", false}, {"::ffff:10.0.0.1", false}, {"172.32.0.1", true},
		// IPv6 forms that embed an IPv4 address (issue 27 item 7): only global
		// unicast (2000::/3) passes, so none of these reach 127/8 or 169.254/16.
		{"::127.0.0.1", false}, {"::169.254.169.254", false}, {"::ffff:0:7f00:1", false}, {"::7f00:1", false},
		{"::8.8.8.8", false}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, {"5f00::1", false},
		{"192.0.2.1", false}, {"198.51.100.1", false}, {"203.0.113.1", false},
	} {
		if got := Allowed(netip.MustParseAddr(c.addr)); got != c.ok {
			t.Errorf("Allowed(%s) = %v, want %v", c.addr, got, c.ok)
		}
	}
}

// The forgery rules: loopback, the metadata address, a name resolving to a
// private address, localhost, schemes other than http(s).
func TestCheckURL(t *testing.T) {
	c := New(Options{Resolver: fakeResolver{
		"internal.example": addrs("10.0.0.7"),
		"mixed.example":    addrs("93.184.216.34", "192.168.0.10"),
		"public.example":   addrs("93.184.216.34"),
	}})
	ctx := context.Background()
	for _, bad := range []string{
		"http://127.0.0.1:8080/hook", "http://[::1]/hook", "http://169.254.169.254/latest/meta-data/",
		"https://internal.example/hook", "https://mixed.example/hook", "http://localhost:9000/",
		"http://app.localhost/", "ftp://public.example/x", "file:///etc/passwd", "https://nowhere.example/",
		"http://0.0.0.0/", "http://[::ffff:7f00:1]/", "http://2130706433/",
	} {
		if err := c.CheckURL(ctx, bad); err == nil {
			t.Errorf("CheckURL(%s) allowed", bad)
		}
	}
	if err := c.CheckURL(ctx, "https://public.example/hook"); err != nil {
		t.Errorf("public: %v", err)
	}
	// The refusal says the address is not allowed and how to allow it, never
	// what the name resolves to (issue 27 item 7: it mapped the inside).
	err := c.CheckURL(ctx, "https://internal.example/hook")
	if !errors.Is(err, ErrForbiddenAddress) || strings.Contains(err.Error(), "10.0.0.7") ||
		!strings.Contains(err.Error(), "--webhook-allow-private") {
		t.Errorf("internal: %v", err)
	}
	open := New(Options{AllowPrivate: true})
	if err := open.CheckURL(ctx, "http://127.0.0.1:1/"); err != nil {
		t.Errorf("allow private: %v", err)
	}
	if err := open.CheckURL(ctx, "gopher://127.0.0.1/"); err == nil {
		t.Error("allow private still refuses other schemes")
	}
}

// A request is refused at connect time too: a loopback receiver, the
// metadata address, a name whose DNS answer turned private after the
// check (DNS rebinding), all without a byte reaching the server.
func TestPostRefusesForbiddenAddresses(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	res := fakeResolver{"rebind.example": addrs("127.0.0.1")}
	c := New(Options{Resolver: res})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, u := range []string{srv.URL, "http://rebind.example" + port + "/", "http://169.254.169.254/latest"} {
		code, _, err := c.Post(ctx, u, nil, []byte("{}"))
		if err == nil || !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("Post(%s) = %d, %v; want a forbidden address", u, code, err)
		}
		if strings.Contains(err.Error(), "http://") {
			t.Errorf("error names the URL: %v", err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the loopback server", hits.Load())
	}
	// The connect-time check alone (what runs after any resolver).
	if err := c.control("tcp4", "127.0.0.1:80", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("control loopback: %v", err)
	}
	for _, a := range []string{"[::7f00:1]:80", "[::127.0.0.1]:80", "[::ffff:0:7f00:1]:80", "[::169.254.169.254]:80"} {
		if err := c.control("tcp6", a, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("control %s: %v", a, err)
		}
	}
	if err := c.control("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control public: %v", err)
	}
}

// Redirects are never followed: the 3xx is the answer, and its target is
// never called (even with private addresses allowed, as in tests).
func TestPostDoesNotFollowRedirects(t *testing.T) {
	var target atomic.Int64
	dst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { target.Add(1) }))
	defer dst.Close()
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dst.URL+"/internal", http.StatusTemporaryRedirect)
	}))
	defer src.Close()
	c := New(Options{AllowPrivate: true})
	code, body, err := c.Post(context.Background(), src.URL, map[string]string{"webhook-id": "x"}, []byte("{}"))
	if err != nil || code != http.StatusTemporaryRedirect {
		t.Fatalf("Post: %d %v", code, err)
	}
	if len(body) > 1024 {
		t.Errorf("body %d bytes", len(body))
	}
	if target.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

// Only the first MaxBody bytes of an answer are kept.
func TestPostKeepsOneKilobyte(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 100000)))
	}))
	defer srv.Close()
	code, body, err := New(Options{AllowPrivate: true}).Post(context.Background(), srv.URL, nil, nil)
	if err != nil || code != 200 || len(body) != 1024 {
		t.Fatalf("Post: %d, %d bytes, %v", code, len(body), err)
	}
}

// A lower-case user-agent (Standard Webhooks names are lower case) is the
// request's one User-Agent: net/http added its own beside it.
func TestPostOneUserAgent(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(strings.Join(r.Header.Values("User-Agent"), "|"))
	}))
	defer srv.Close()
	c := New(Options{AllowPrivate: true})
	if _, _, err := c.Post(context.Background(), srv.URL, map[string]string{"user-agent": "agentd-tools", "webhook-id": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if ua := got.Load(); ua != "agentd-tools" {
		t.Fatalf("User-Agent headers %q", ua)
	}
}
