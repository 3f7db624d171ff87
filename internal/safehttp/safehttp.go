// Package safehttp is an HTTP client for URLs that clients of agentd give
// it (webhook receivers), guarded against server-side request forgery: only
// http and https; only globally routable unicast addresses are called
// (loopback, private, link-local, unique-local, shared (CGNAT), multicast,
// metadata and every IPv6 form embedding an IPv4 address are refused), when
// the URL is checked and again at connect time on the address actually
// dialled (so a DNS answer that changes in between,
// DNS rebinding, gains nothing); redirects are never followed; environment
// proxies are ignored. AllowPrivate turns the address rules off for
// on-premises receivers and tests.
package safehttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver is one. Tests pass
// their own to make any name resolve anywhere.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Client posts to guarded URLs. Build it with New; it is safe for
// concurrent use and keeps connections alive between requests.
type Client struct {
	allowPrivate bool
	resolver     Resolver
	maxBody      int
	http         *http.Client
}

// Options configure a Client.
type Options struct {
	AllowPrivate bool     // skip the address rules (on-premises receivers, tests)
	Resolver     Resolver // nil: net.DefaultResolver
	MaxBody      int      // bytes of a response kept; default 1024
}

// New builds a Client.
func New(o Options) *Client {
	c := &Client{allowPrivate: o.AllowPrivate, resolver: o.Resolver, maxBody: o.MaxBody}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	if c.maxBody <= 0 {
		c.maxBody = 1024
	}
	// A short connect timeout: a receiver that does not even accept the
	// connection holds a sending slot for 3 s, not 10 (issue 27 item 4).
	d := &net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second, Control: c.control}
	tr := &http.Transport{
		Proxy: nil, // a proxy would hide the address dialled
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return c.dial(ctx, d, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // the caller's context bounds the request
	}
	c.http = &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is the answer, never followed
		},
	}
	return c
}

// ErrForbiddenAddress is returned (wrapped) for a URL whose host is, or
// resolves to, an address the rules refuse.
var ErrForbiddenAddress = errors.New("address not allowed")

// forbidden lists the ranges refused beyond what netip classifies as
// loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
// (169.254/16 with the metadata address 169.254.169.254, fe80::/10),
// multicast and unspecified.
var forbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT; Alibaba's metadata 100.100.100.200)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (embeds an IPv4 address)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4 (embeds an IPv4 address)
	netip.MustParsePrefix("fd00:ec2::/32"),   // AWS IMDS over IPv6 (also unique-local)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2001::/32"),       // Teredo (embeds an IPv4 address)
	netip.MustParsePrefix("2001:2::/48"),     // benchmarking
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("255.255.255.255/32"),
}

// globalV6 is the only IPv6 range a receiver may be in: global unicast.
// Everything outside it is refused, which covers every form that embeds an
// IPv4 address (::a.b.c.d, ::ffff:0:a.b.c.d, ::7f00:1) without listing them.
var globalV6 = netip.MustParsePrefix("2000::/3")

// Allowed reports whether a receiver at addr may be called: only globally
// routable unicast addresses are.
func Allowed(addr netip.Addr) bool {
	addr = addr.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if !addr.IsValid() || addr.Zone() != "" || !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return false
	}
	if addr.Is6() && !globalV6.Contains(addr) {
		return false
	}
	for _, p := range forbidden {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// CheckURL refuses a URL that is not http or https, or whose host is or
// resolves to a refused address. The error message is for the client.
func (c *Client) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return errors.New("must use http or https")
	}
	if c.allowPrivate {
		return nil
	}
	_, err = c.resolve(ctx, u.Hostname())
	return err
}

// resolve returns the host's addresses, or an error when it has none or
// any of them is refused (one bad answer is enough to refuse a name).
func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(host); err == nil {
		if !c.allowPrivate && !Allowed(a) {
			return nil, refused(host)
		}
		return []netip.Addr{a}, nil
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		if !c.allowPrivate {
			return nil, refused(host)
		}
	}
	addrs, err := c.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("host %s does not resolve", host)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("host %s has no address", host)
	}
	if !c.allowPrivate {
		for _, a := range addrs {
			if !Allowed(a) {
				return nil, refused(host)
			}
		}
	}
	return addrs, nil
}

// refused is the one refusal message: it names the host as given and never
// what the host resolves to, which would map the inside of the network.
func refused(host string) error {
	return fmt.Errorf("host %s is not an allowed address: only public addresses are (an operator can allow private ones with --webhook-allow-private): %w", host, ErrForbiddenAddress)
}

// dial resolves the host itself (through the Resolver, checked) and dials
// the addresses in turn; control checks each again at connect time.
func (c *Client) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var first error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// control runs on the socket just before connect: the last word on the
// address, whatever resolved it.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	if c.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connect: %w", ErrForbiddenAddress)
	}
	if !Allowed(ap.Addr()) {
		return fmt.Errorf("connect: %w (only public addresses; see --webhook-allow-private)", ErrForbiddenAddress)
	}
	return nil
}

// Post sends body to rawURL with the headers and returns the status and
// at most MaxBody bytes of the answer. The context bounds the whole
// request. Errors carry no URL (it may hold credentials).
func (c *Client) Post(ctx context.Context, rawURL string, header map[string]string, body []byte) (int, []byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, nil, errors.New("invalid URL")
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return 0, nil, errors.New("URL must use http or https")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, errors.New("invalid URL")
	}
	for k, v := range header {
		req.Header[k] = []string{v} // as given: Standard Webhooks names are lower case
	}
	if ua, ok := header["user-agent"]; ok {
		// net/http adds its own User-Agent unless the canonical key is set:
		// one header, not two (issue 32).
		delete(req.Header, "user-agent")
		req.Header.Set("User-Agent", ua)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxBody)))
	// Drain a little more so the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, b, nil
}
