package sipdial

import "testing"

func TestParseSipfrag(t *testing.T) {
	for body, want := range map[string]int{
		"SIP/2.0 200 OK\r\n": 200, "SIP/2.0 100 Trying": 100, "sip/2.0 486 Busy Here\r\nVia: x\r\n": 486,
		"": 0, "SIP/2.0 20 OK": 0, "SIP/2.0 999 X": 0, "HTTP/1.1 200 OK": 0, "SIP/2.0": 0, "INVITE sip:x SIP/2.0": 0,
	} {
		code, ok := ParseSipfrag([]byte(body))
		if code != want || ok != (want != 0) {
			t.Errorf("ParseSipfrag(%q) = %d, %v; want %d", body, code, ok, want)
		}
	}
}

func FuzzParseSipfrag(f *testing.F) {
	for _, s := range []string{"SIP/2.0 200 OK\r\n", "SIP/2.0 603 Declined", "SIP/2.0 1x0", "\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if code, ok := ParseSipfrag(b); ok && (code < 100 || code > 699) {
			t.Fatalf("ParseSipfrag(%q) = %d", b, code)
		}
	})
}
