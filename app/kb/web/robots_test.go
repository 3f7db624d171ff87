package web

import "testing"

func TestRobotsRules(t *testing.T) {
	r := ParseRobots([]byte(`# comment
User-agent: Googlebot
Disallow: /

User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$
Crawl-delay: 2
Sitemap: https://example.com/sitemap.xml
`))
	for path, want := range map[string]bool{"/": true, "/private": false, "/private/x": false, "/private/open/1": true,
		"/doc.pdf": false, "/doc.pdf?x=1": true, "/public": true} {
		if got := r.Allowed(path); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	if r.Delay.Seconds() != 2 || len(r.Maps) != 1 {
		t.Errorf("delay %v maps %v", r.Delay, r.Maps)
	}
}

func FuzzRobotsAndSitemap(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a*b$\n"), "/a/x/b")
	f.Add([]byte(`<urlset><url><loc>http://x/</loc></url></urlset>`), "/")
	f.Fuzz(func(t *testing.T, b []byte, path string) {
		ParseRobots(b).Allowed(path)
		ParseSitemap(b)
		Links(b, "http://example.com/")
	})
}
