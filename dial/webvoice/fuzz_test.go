package webvoice

import (
	"strings"
	"testing"
)

// FuzzParse: any message from a browser is parsed or refused, never a
// panic, and what is accepted is well formed.
func FuzzParse(f *testing.F) {
	f.Add(true, []byte{1, 0, 255, 255})
	f.Add(true, []byte{1})
	f.Add(false, []byte(`{"type":"mute","muted":true}`))
	f.Add(false, []byte(`{"type":"hangup"}`))
	f.Add(false, []byte(`{"type":"dtmf","digits":"12#"}`))
	f.Add(false, []byte(`{"type":"dtmf","digits":"x"}`))
	f.Add(false, []byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, bin bool, data []byte) {
		in, err := Parse(bin, data)
		if err != nil {
			return
		}
		switch {
		case bin:
			if len(in.PCM)*2 != len(data) || len(data) > MaxAudio {
				t.Fatalf("audio of %d bytes parsed to %d samples", len(data), len(in.PCM))
			}
		case in.Digits != "":
			if strings.Trim(in.Digits, "0123456789*#ABCD") != "" {
				t.Fatalf("digits %q accepted", in.Digits)
			}
		case in.Mute == nil && !in.Hangup:
			t.Fatalf("control %q accepted as nothing", data)
		}
		s := New()
		defer s.Close()
		if err := s.Receive(bin, data); err != nil {
			t.Fatal(err)
		}
	})
}
