package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestRoundTripFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.wav")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, Format{Rate: 8000, Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int16, 0, 32000)
	for i := 0; i < 16000; i++ {
		want = append(want, int16(i), int16(-i))
	}
	for i := 0; i < len(want); i += 320 {
		if err := w.Write(want[i:min(i+320, len(want))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := os.ReadFile(p)
	if got := binary.LittleEndian.Uint32(b[40:]); got != uint32(2*len(want)) {
		t.Fatalf("data size %d, want %d (patched at Close)", got, 2*len(want))
	}
	got, fm, err := ReadAll(bytes.NewReader(b))
	if err != nil || fm != (Format{8000, 2}) || !equal(got, want) {
		t.Fatalf("read back %v %v %d samples", err, fm, len(got))
	}
	// sox, a reader we did not write, agrees.
	if _, err := exec.LookPath("soxi"); err == nil {
		out, err := exec.Command("soxi", "-s", p).Output()
		if err != nil || string(bytes.TrimSpace(out)) != "16000" {
			t.Fatalf("soxi -s: %q %v", out, err)
		}
	}
}

func TestStreamWithoutSizes(t *testing.T) {
	var b bytes.Buffer
	w, _ := NewWriter(&b, Format{Rate: 24000, Channels: 1}) // not seekable: sizes stay unknown
	w.Write([]int16{1, 2, 3})
	w.Close()
	// Byte by byte, as a slow network gives it, with an odd split.
	rd, err := NewReader(io.MultiReader(bytes.NewReader(b.Bytes()[:45]), bytes.NewReader(b.Bytes()[45:])))
	if err != nil {
		t.Fatal(err)
	}
	var got []int16
	p := make([]int16, 8)
	for {
		n, err := rd.Read(p)
		got = append(got, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !equal(got, []int16{1, 2, 3}) {
		t.Fatalf("got %v", got)
	}
}

func TestReadsEspeak(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	p := filepath.Join(t.TempDir(), "e.wav")
	if out, err := exec.Command("espeak-ng", "-w", p, "hello").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	f, _ := os.Open(p)
	defer f.Close()
	s, fm, err := ReadAll(f)
	if err != nil || fm.Rate != 22050 || fm.Channels != 1 || len(s) < 5000 {
		t.Fatalf("espeak: %v %v %d", err, fm, len(s))
	}
}

func TestRejects(t *testing.T) {
	ok := Encode(Format{8000, 1}, []int16{1})
	bad := map[string][]byte{
		"empty":   nil,
		"not wav": []byte("ID3\x03 this is an mp3 file of speech....................."),
		"8-bit":   patch(ok, 34, 8),
		"float":   patch(ok, 20, 3),
		"5 chans": patch(ok, 22, 5),
	}
	for name, b := range bad {
		if _, _, err := ReadAll(bytes.NewReader(b)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

func patch(b []byte, at int, v uint16) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint16(c[at:], v)
	return c
}

func equal(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzReader(f *testing.F) {
	f.Add(Encode(Format{8000, 1}, []int16{1, -1, 300}))
	f.Add(Encode(Format{22050, 2}, []int16{1, 2}))
	f.Add(Header(Format{24000, 1}, 0))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVELIST\x04\x00\x00\x00abcdfmt "))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, fm, err := ReadAll(bytes.NewReader(b))
		if err != nil {
			return
		}
		if fm.Channels < 1 || fm.Channels > 2 || fm.Rate < 1 || len(s) > len(b)/2 {
			t.Fatalf("accepted %v with %d samples from %d bytes", fm, len(s), len(b))
		}
	})
}
