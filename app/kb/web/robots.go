// Package web brings web pages into the knowledge base: a page fetched
// through the forgery guard and converted to Markdown (app/kb/convert),
// conditional refreshes (ETag, Last-Modified), and a polite crawl of a site
// (robots.txt, a sitemap or links from a start page, a page limit, a pace).
// No HTTP client of its own: the guard's (internal/safehttp) is passed in.
package web

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// UserAgent is the token agentd's crawler answers to in robots.txt.
const UserAgent = "agentd"

// Robots is a site's robots.txt rules for agentd: the group naming it,
// else the "*" group. The zero value allows everything.
type Robots struct {
	rules []rule
	Delay time.Duration // Crawl-delay, when the site asks one
	Maps  []string      // Sitemap lines
}

type rule struct {
	re    *regexp.Regexp
	n     int // the pattern's length: the longest match wins
	allow bool
}

// ParseRobots reads a robots.txt (RFC 9309): the longest matching rule
// wins, Allow over Disallow on a tie; * and $ in paths are honoured.
func ParseRobots(b []byte) Robots {
	type group struct {
		agents []string
		rules  []rule
		delay  time.Duration
	}
	var groups []*group
	var cur *group
	var maps []string
	inAgents := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if !inAgents || cur == nil {
				cur = &group{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, strings.ToLower(val))
			inAgents = true
			continue
		case "sitemap":
			maps = append(maps, val)
		case "allow", "disallow":
			if cur != nil && (val != "" || key == "allow") {
				cur.rules = append(cur.rules, rule{re: compile(val), n: len(val), allow: key == "allow"})
			}
		case "crawl-delay":
			if cur != nil {
				if f, err := strconv.ParseFloat(val, 64); err == nil && f > 0 {
					cur.delay = time.Duration(min(f, 60) * float64(time.Second))
				}
			}
		}
		inAgents = false
	}
	var pick *group
	for _, g := range groups {
		for _, a := range g.agents {
			if a == UserAgent {
				pick = g
			} else if a == "*" && pick == nil {
				pick = g
			}
		}
	}
	r := Robots{Maps: maps}
	if pick != nil {
		r.rules, r.Delay = pick.rules, pick.delay
	}
	return r
}

// Allowed reports whether path (with its query) may be fetched.
func (r Robots) Allowed(path string) bool {
	if path == "" {
		path = "/"
	}
	best, allow := -1, true
	for _, ru := range r.rules {
		if ru.re.MatchString(path) && (ru.n > best || (ru.n == best && ru.allow)) {
			best, allow = ru.n, ru.allow
		}
	}
	return allow
}

// compile turns a robots.txt path pattern into a regexp: * is any run of
// characters, a final $ anchors the end; otherwise it matches a prefix.
func compile(pattern string) *regexp.Regexp {
	anchored := strings.HasSuffix(pattern, "$")
	parts := strings.Split(strings.TrimSuffix(pattern, "$"), "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	expr := "^" + strings.Join(parts, ".*")
	if anchored {
		expr += "$"
	}
	return regexp.MustCompile(expr)
}
