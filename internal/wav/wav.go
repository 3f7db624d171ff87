// Package wav reads and writes WAV files of 16-bit PCM, mono or stereo, at
// any rate: the utterances sent to speech-to-text, the speech a
// text-to-speech service answers, and the calls' recordings. The reader
// streams (a data size of 0 or 0xFFFFFFFF, as streaming servers write,
// means "until the end"); the writer patches the sizes at Close when it
// writes to a file it can seek.
package wav

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Format is the layout of the samples: interleaved, 16-bit little endian.
type Format struct {
	Rate     int // samples per second per channel
	Channels int // 1 or 2
}

// ErrFormat is a file that is not a WAV of 16-bit PCM this package reads.
var ErrFormat = errors.New("wav: not a 16-bit PCM WAV")

const (
	headerSize  = 44
	maxChunk    = 1 << 20 // a chunk before the data bigger than this is refused
	maxSkipped  = 64      // chunks before "data" (LIST, fact, ...)
	formatPCM   = 1
	formatExt   = 0xFFFE
	maxRate     = 384000
	unknownSize = 0xFFFFFFFF
)

// Reader reads the samples of a WAV stream.
type Reader struct {
	Format Format
	r      *bufio.Reader
	left   int64 // data bytes left; -1: until EOF
	odd    []byte
}

// NewReader reads the header up to the data chunk.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	var riff [12]byte
	if _, err := io.ReadFull(br, riff[:]); err != nil {
		return nil, fmt.Errorf("%w: short header", ErrFormat)
	}
	if string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%w: no RIFF/WAVE header", ErrFormat)
	}
	rd := &Reader{r: br}
	haveFmt := false
	for i := 0; i < maxSkipped; i++ {
		var ch [8]byte
		if _, err := io.ReadFull(br, ch[:]); err != nil {
			return nil, fmt.Errorf("%w: no data chunk", ErrFormat)
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1024 {
				return nil, fmt.Errorf("%w: fmt chunk of %d bytes", ErrFormat, size)
			}
			b := make([]byte, size+size%2)
			if _, err := io.ReadFull(br, b); err != nil {
				return nil, fmt.Errorf("%w: short fmt chunk", ErrFormat)
			}
			if err := rd.parseFmt(b[:size]); err != nil {
				return nil, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, fmt.Errorf("%w: data before fmt", ErrFormat)
			}
			rd.left = int64(size)
			if size == 0 || size == unknownSize {
				rd.left = -1
			}
			return rd, nil
		default:
			if size > maxChunk {
				return nil, fmt.Errorf("%w: %q chunk of %d bytes", ErrFormat, id, size)
			}
			if _, err := br.Discard(int(size + size%2)); err != nil {
				return nil, fmt.Errorf("%w: short %q chunk", ErrFormat, id)
			}
		}
	}
	return nil, fmt.Errorf("%w: no data chunk", ErrFormat)
}

func (rd *Reader) parseFmt(b []byte) error {
	tag := binary.LittleEndian.Uint16(b[0:2])
	ch := int(binary.LittleEndian.Uint16(b[2:4]))
	rate := int(binary.LittleEndian.Uint32(b[4:8]))
	bits := binary.LittleEndian.Uint16(b[14:16])
	if tag == formatExt && len(b) >= 26 {
		tag = binary.LittleEndian.Uint16(b[24:26]) // the sub-format GUID starts with the tag
	}
	if tag != formatPCM || bits != 16 {
		return fmt.Errorf("%w: format %d with %d bits", ErrFormat, tag, bits)
	}
	if ch < 1 || ch > 2 || rate < 1 || rate > maxRate {
		return fmt.Errorf("%w: %d channels at %d Hz", ErrFormat, ch, rate)
	}
	rd.Format = Format{Rate: rate, Channels: ch}
	return nil
}

// Read fills p with interleaved samples as they arrive: it returns what
// one read of the underlying stream gives (at least one sample unless at
// the end), and io.EOF after the last.
func (rd *Reader) Read(p []int16) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if rd.left == 0 {
			return 0, io.EOF
		}
		want := int64(2*len(p) - len(rd.odd))
		if rd.left >= 0 && want > rd.left {
			want = rd.left
		}
		buf := make([]byte, len(rd.odd), len(rd.odd)+int(want))
		copy(buf, rd.odd)
		n, err := rd.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if rd.left > 0 {
			rd.left -= int64(n)
		}
		k := len(buf) / 2
		for i := 0; i < k; i++ {
			p[i] = int16(binary.LittleEndian.Uint16(buf[2*i:]))
		}
		rd.odd = append(rd.odd[:0], buf[2*k:]...)
		if err == io.EOF || rd.left == 0 {
			rd.left = 0
			if k == 0 {
				return 0, io.EOF
			}
			return k, nil
		}
		if err != nil {
			return k, err
		}
		if k > 0 {
			return k, nil
		}
	}
}

// ReadAll reads a whole WAV: its interleaved samples and format.
func ReadAll(r io.Reader) ([]int16, Format, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, Format{}, err
	}
	var out []int16
	buf := make([]int16, 4096)
	for {
		n, err := rd.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, rd.Format, nil
		}
		if err != nil {
			return out, rd.Format, err
		}
	}
}

// Header is the 44-byte header of a WAV holding n samples (all channels).
func Header(f Format, n int64) []byte {
	data := uint32(min(2*n, int64(unknownSize-headerSize)))
	h := make([]byte, headerSize)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], data+headerSize-8)
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], formatPCM)
	binary.LittleEndian.PutUint16(h[22:], uint16(f.Channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(f.Rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(f.Rate*f.Channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(f.Channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], data)
	return h
}

// Encode is a whole WAV in memory.
func Encode(f Format, samples []int16) []byte {
	out := make([]byte, headerSize, headerSize+2*len(samples))
	copy(out, Header(f, int64(len(samples))))
	for _, s := range samples {
		out = binary.LittleEndian.AppendUint16(out, uint16(s))
	}
	return out
}

// Writer writes a WAV stream. To a file (an io.WriteSeeker) Close writes
// the final sizes into the header; to a plain stream the sizes stay
// 0xFFFFFFFF ("until the end"), which readers of streams accept.
type Writer struct {
	f    Format
	dst  io.Writer
	w    *bufio.Writer
	n    int64 // samples written
	buf  []byte
	done bool
}

// NewWriter writes the header and returns the writer.
func NewWriter(dst io.Writer, f Format) (*Writer, error) {
	if f.Channels < 1 || f.Channels > 2 || f.Rate < 1 || f.Rate > maxRate {
		return nil, fmt.Errorf("wav: %d channels at %d Hz", f.Channels, f.Rate)
	}
	w := &Writer{f: f, dst: dst, w: bufio.NewWriterSize(dst, 32<<10)}
	h := Header(f, 0)
	binary.LittleEndian.PutUint32(h[4:], unknownSize)
	binary.LittleEndian.PutUint32(h[40:], unknownSize)
	if _, err := w.w.Write(h); err != nil {
		return nil, err
	}
	return w, nil
}

// Write appends interleaved samples.
func (w *Writer) Write(samples []int16) error {
	w.buf = w.buf[:0]
	for _, s := range samples {
		w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(s))
	}
	_, err := w.w.Write(w.buf)
	w.n += int64(len(samples))
	return err
}

// Samples is how many samples (all channels) were written.
func (w *Writer) Samples() int64 { return w.n }

// Close flushes and, on a seekable destination, fixes the header's sizes.
// It does not close the destination.
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.w.Flush(); err != nil {
		return err
	}
	ws, ok := w.dst.(io.WriteSeeker)
	if !ok {
		return nil
	}
	end, err := ws.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil // a pipe: the sizes stay "until the end"
	}
	if _, err := ws.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := ws.Write(Header(w.f, w.n)); err != nil {
		return err
	}
	_, err = ws.Seek(end, io.SeekStart)
	return err
}
