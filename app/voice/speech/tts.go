package speech

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/internal/wav"
)

// TTS speaks through POST {base}/audio/speech (JSON: model, input, voice,
// speed, response_format), which OpenAI, Groq, speaches, Kokoro-FastAPI
// and LocalAI answer. It asks for WAV (or raw PCM, Config.Format) and
// reads either answer: a WAV at any rate and channel count, or raw 16-bit
// PCM (24 kHz, OpenAI's, unless the Content-Type names a rate), converted
// to 8 kHz mono as the body arrives.
type TTS struct{ c *client }

// NewTTS builds the client; with Kind none (or "") it returns nil, nil.
func NewTTS(cfg Config) (*TTS, error) {
	c, err := newClient(cfg, "--tts", ServiceTTS, "/audio/speech", "tts-1")
	if c == nil || err != nil {
		return nil, err
	}
	return &TTS{c: c}, nil
}

// Host is the service's host (for logs; never the key).
func (t *TTS) Host() string { return t.c.Host() }

// pcmRate is the rate of OpenAI's raw pcm answers.
const pcmRate = 24000

// Speak sends the text and returns its audio as a stream once the first
// bytes have arrived. Close the stream to stop early (barge-in): that
// ends the request upstream. A failure of the service is an *Error.
func (t *TTS) Speak(ctx context.Context, req SpeakRequest) (Stream, error) {
	body := map[string]any{"model": t.c.cfg.Model, "input": req.Text, "response_format": t.c.cfg.Format}
	if req.Voice != "" {
		body["voice"] = req.Voice
	}
	if req.Speed != 0 {
		body["speed"] = req.Speed
	}
	b, _ := json.Marshal(body)
	cctx, cancel := context.WithCancel(ctx)
	s := &ttsStream{t: t, parent: ctx, ctx: cctx, cancel: cancel}
	s.watch = time.AfterFunc(t.c.cfg.Timeout, s.expire)
	hr, err := http.NewRequestWithContext(cctx, http.MethodPost, t.c.endpoint, bytes.NewReader(b))
	if err != nil {
		s.Close()
		return nil, t.c.fail("", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	t.c.authorize(hr)
	resp, err := t.c.http.Do(hr)
	if err != nil {
		err = s.failure(err)
		s.Close()
		return nil, err
	}
	s.body = resp.Body
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		s.Close()
		return nil, t.c.fail(httpDetail(resp.StatusCode, msg), nil)
	}
	if err := s.open(resp.Header.Get("Content-Type")); err != nil {
		s.Close()
		return nil, err
	}
	s.watch.Stop()
	return s, nil
}

// ttsStream decodes and resamples one answer as it arrives. Timeout
// bounds each wait on the network, not the whole answer: the loop reads
// at the pace it plays.
type ttsStream struct {
	t        *TTS
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelFunc
	body     io.ReadCloser
	watch    *time.Timer
	timedOut bool
	mu       sync.Mutex

	src      func([]int16) (int, error)
	channels int
	rs       *resampler
	in       []int16
	carry    int
	mono     []float32
	done     bool
	closed   atomic.Bool
	once     sync.Once
}

func (s *ttsStream) expire() {
	s.mu.Lock()
	s.timedOut = true
	s.mu.Unlock()
	s.cancel()
}

// open sniffs the answer's first bytes: a WAV, raw PCM, or something else
// (mp3, an error page), which is a failure.
func (s *ttsStream) open(ctype string) error {
	br := bufio.NewReaderSize(s.body, 4096)
	head, err := br.Peek(4)
	if err != nil && len(head) == 0 {
		if err == io.EOF {
			return s.t.c.fail("an empty answer", nil)
		}
		return s.failure(err)
	}
	mt, params, _ := mime.ParseMediaType(ctype)
	var rate int
	switch {
	case string(head) == "RIFF":
		rd, err := wav.NewReader(br)
		if err != nil {
			if s.ctx.Err() != nil {
				return s.failure(err)
			}
			return s.t.c.fail("the answer is not a 16-bit PCM WAV", err)
		}
		s.src, s.channels, rate = rd.Read, rd.Format.Channels, rd.Format.Rate
	case mt == "" || mt == "audio/pcm" || mt == "audio/l16" || mt == "application/octet-stream" || mt == "audio/raw":
		rate = pcmRate
		if r, err := strconv.Atoi(params["rate"]); err == nil && r > 0 {
			rate = r
		}
		s.channels = 1
		if c, err := strconv.Atoi(params["channels"]); err == nil && (c == 1 || c == 2) {
			s.channels = c
		}
		s.src = (&rawPCM{r: br, bigEndian: mt == "audio/l16"}).Read
	default:
		return s.t.c.fail(fmt.Sprintf("answered %s, not wav or pcm audio", mt), nil)
	}
	if rate < 8000 || rate > 192000 {
		return s.t.c.fail(fmt.Sprintf("audio at %d Hz (want 8 to 192 kHz)", rate), nil)
	}
	rs, err := newResampler(rate, 8000)
	if err != nil {
		return s.t.c.fail(err.Error(), nil)
	}
	s.rs = rs
	return nil
}

// Next returns the next chunk of 8 kHz mono audio, io.EOF after the last.
func (s *ttsStream) Next() ([]int16, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	if s.done {
		return nil, io.EOF
	}
	if s.in == nil {
		s.in = make([]int16, 4096)
	}
	for {
		s.watch.Reset(s.t.c.cfg.Timeout)
		n, err := s.src(s.in[s.carry:])
		s.watch.Stop()
		n += s.carry
		s.mono = s.mono[:0]
		i := 0
		for ; i+s.channels <= n; i += s.channels {
			if s.channels == 2 {
				s.mono = append(s.mono, (float32(s.in[i])+float32(s.in[i+1]))/2)
			} else {
				s.mono = append(s.mono, float32(s.in[i]))
			}
		}
		s.carry = copy(s.in, s.in[i:n]) // half a stereo frame waits for its other half
		out := s.rs.push(s.mono, nil)
		if err == io.EOF {
			s.done = true
			out = s.rs.flush(out)
			s.release()
		} else if err != nil {
			if s.closed.Load() {
				return nil, errClosed // Close from another goroutine (barge-in)
			}
			err = s.failure(err)
			s.release()
			return nil, err
		}
		if len(out) > 0 {
			return out, nil
		}
		if s.done {
			return nil, io.EOF
		}
	}
}

// Close stops the answer early; safe to call more than once, and while
// another goroutine waits in Next (which then returns an error).
func (s *ttsStream) Close() error {
	s.closed.Store(true)
	s.release()
	return nil
}

func (s *ttsStream) release() {
	s.once.Do(func() {
		s.watch.Stop()
		s.cancel()
		if s.body != nil {
			s.body.Close()
		}
	})
}

var errClosed = errors.New("speech stream closed")

func (s *ttsStream) failure(err error) error {
	s.mu.Lock()
	timedOut := s.timedOut
	s.mu.Unlock()
	switch {
	case s.parent.Err() != nil:
		return s.parent.Err()
	case timedOut:
		return s.t.c.fail(fmt.Sprintf("no audio within %s", s.t.c.cfg.Timeout), err)
	}
	return s.t.c.fail("", err)
}

// rawPCM reads 16-bit samples with no header, keeping an odd byte.
type rawPCM struct {
	r         io.Reader
	bigEndian bool
	buf       []byte
	odd       []byte
}

func (p *rawPCM) Read(out []int16) (int, error) {
	for {
		if cap(p.buf) < 2*len(out) {
			p.buf = make([]byte, 2*len(out))
		}
		b := append(p.buf[:0], p.odd...)
		n, err := p.r.Read(b[len(b) : 2*len(out)])
		b = b[:len(b)+n]
		k := len(b) / 2
		for i := 0; i < k; i++ {
			if p.bigEndian {
				out[i] = int16(binary.BigEndian.Uint16(b[2*i:]))
			} else {
				out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
			}
		}
		p.odd = append(p.odd[:0], b[2*k:]...)
		if k > 0 || err != nil {
			return k, err
		}
	}
}
