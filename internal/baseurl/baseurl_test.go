package baseurl

import "testing"

func TestV1(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:11434":        "http://127.0.0.1:11434/v1",
		"http://127.0.0.1:11434/":       "http://127.0.0.1:11434/v1",
		"http://127.0.0.1:11434/v1":     "http://127.0.0.1:11434/v1",
		"http://127.0.0.1:11434/v1/":    "http://127.0.0.1:11434/v1",
		"https://api.openai.com":        "https://api.openai.com/v1",
		"https://gw.example.com/ai/v1":  "https://gw.example.com/ai/v1",
		"https://gw.example.com/ai":     "https://gw.example.com/ai/v1",
		" https://u:p@h.example.com/v1": "https://u:p@h.example.com/v1",
	} {
		u, err := V1(in)
		if err != nil || u.String() != want {
			t.Errorf("V1(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:11434", "ftp://h/v1", "http:///v1", "http://h/v1?x=1", "http://h/#f"} {
		if u, err := V1(bad); err == nil {
			t.Errorf("V1(%q) = %v, want an error", bad, u)
		}
	}
}

func FuzzV1(f *testing.F) {
	for _, s := range []string{"http://h", "https://h/v1/", "http://h/a/v1", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := V1(s)
		if err != nil {
			return
		}
		again, err := V1(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("V1(%q) = %s, not stable: %v %v", s, u, again, err)
		}
	})
}
