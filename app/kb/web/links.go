package web

import (
	"bytes"
	"encoding/xml"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// maxLinks bounds the links taken from one page or sitemap.
const maxLinks = 5000

// Links are the http(s) links of an HTML page, resolved against base,
// without fragments, in document order, each once. A page marked nofollow
// gives none.
func Links(page []byte, base string) []string {
	bu, err := url.Parse(base)
	if err != nil {
		return nil
	}
	z := html.NewTokenizer(bytes.NewReader(page))
	seen := map[string]bool{}
	var out []string
	for len(out) < maxLinks {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "meta":
			if attrOf(tok, "name") == "robots" && strings.Contains(strings.ToLower(attrOf(tok, "content")), "nofollow") {
				return nil
			}
		case "base":
			if h := attrOf(tok, "href"); h != "" {
				if nb, err := bu.Parse(h); err == nil {
					bu = nb
				}
			}
		case "a":
			if strings.Contains(strings.ToLower(attrOf(tok, "rel")), "nofollow") {
				continue
			}
			if u := resolve(bu, attrOf(tok, "href")); u != "" && !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
	}
	return out
}

func attrOf(t html.Token, name string) string {
	for _, a := range t.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func resolve(base *url.URL, href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return ""
	}
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}

// Sitemap is a sitemap's page URLs and, for a sitemap index, the nested
// sitemaps' URLs.
type Sitemap struct {
	Pages, Maps []string
}

// ParseSitemap reads a sitemap or a sitemap index (sitemaps.org); a
// plain-text sitemap is one URL a line.
func ParseSitemap(b []byte) Sitemap {
	var doc struct {
		XMLName xml.Name
		URLs    []string `xml:"url>loc"`
		Maps    []string `xml:"sitemap>loc"`
	}
	if xml.Unmarshal(b, &doc) == nil {
		return Sitemap{Pages: trimAll(doc.URLs), Maps: trimAll(doc.Maps)}
	}
	var s Sitemap
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
			s.Pages = append(s.Pages, line)
		}
	}
	return Sitemap{Pages: trimAll(s.Pages)}
}

func trimAll(in []string) []string {
	out := make([]string, 0, min(len(in), maxLinks))
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && len(out) < maxLinks {
			out = append(out, s)
		}
	}
	return out
}
