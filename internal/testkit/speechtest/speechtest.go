// Package speechtest is a real local HTTP server standing in for an
// OpenAI-compatible speech service (POST /v1/audio/speech and
// /v1/audio/transcriptions), as llmtest stands in for the model. Speech
// answers are real speech made with espeak-ng or a synthetic tone, in the
// format asked (wav or pcm) or another, streamed in chunks, with a slow
// first byte, an error status or a hang; transcripts come from a script
// (in order, or by a rule on the received audio). Every request is kept
// for the test to read back. It is imported by tests only.
package speechtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/wav"
)

// Speech is one scripted /audio/speech answer. With no Tone and no PCM the
// request's input (or Text) is spoken by espeak-ng.
type Speech struct {
	Text     string        // what espeak-ng says instead of the input
	Tone     float64       // Hz: a sine tone instead of speech
	Duration time.Duration // the tone's length (default 500 ms)
	PCM      []int16       // exact audio (mono, at Rate)
	// Rate is the audio's rate (default 24000; espeak-ng's speech in a WAV
	// stays at its own 22050 Hz unless set).
	Rate     int
	Channels int    // 2: a stereo WAV (the same audio on both sides)
	Format   string // answer this format whatever was asked: wav, pcm, mp3
	// Sized writes the WAV's real sizes; by default they are 0xFFFFFFFF,
	// as streaming servers write them.
	Sized      bool
	Status     int           // not 0 or 200: answer this status with an OpenAI error body
	FirstByte  time.Duration // wait before the status line and the first byte
	Hang       bool          // never answer; wait for the client to give up
	Chunk      int           // bytes per write (default 4800)
	ChunkDelay time.Duration // wait between chunks
}

// Transcript is one scripted /audio/transcriptions answer.
type Transcript struct {
	Text   string
	Status int           // not 0 or 200: answer this status
	Delay  time.Duration // wait before answering
	Hang   bool
}

// SpeakRequest is a received /audio/speech request.
type SpeakRequest struct {
	Model          string  `json:"model"`
	Input          string  `json:"input"`
	Voice          string  `json:"voice"`
	Speed          float64 `json:"speed"`
	ResponseFormat string  `json:"response_format"`
	Header         http.Header
	At             time.Time
}

// TranscribeRequest is a received /audio/transcriptions request with the
// audio it carried.
type TranscribeRequest struct {
	Model, Language, Prompt, ResponseFormat string
	Header                                  http.Header
	Format                                  wav.Format
	PCM                                     []int16 // interleaved as sent
	Duration                                time.Duration
	RMS                                     float64
	At                                      time.Time
}

// Server is the scripted speech service.
type Server struct {
	URL string // base URL, ".../v1"
	// Canceled counts requests whose client went away before the answer ended.
	Canceled atomic.Int64

	t         testing.TB
	mu        sync.Mutex
	speech    []Speech
	speakRule func(SpeakRequest) Speech
	texts     []Transcript
	textRule  func(TranscribeRequest) Transcript
	spoke     []SpeakRequest
	heard     []TranscribeRequest
	srv       *http.Server
}

// New starts a server, stopped at cleanup. With nothing scripted, speech
// is espeak-ng saying the input and every transcript is "hello".
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", t: t}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// PushSpeech queues speech answers, used in order.
func (s *Server) PushSpeech(a ...Speech) {
	s.mu.Lock()
	s.speech = append(s.speech, a...)
	s.mu.Unlock()
}

// AnswerSpeech sets how speech requests are answered once the queue is empty.
func (s *Server) AnswerSpeech(f func(SpeakRequest) Speech) {
	s.mu.Lock()
	s.speakRule = f
	s.mu.Unlock()
}

// PushTranscripts queues transcripts, used in order.
func (s *Server) PushTranscripts(a ...Transcript) {
	s.mu.Lock()
	s.texts = append(s.texts, a...)
	s.mu.Unlock()
}

// AnswerTranscripts sets how transcriptions are answered once the queue is
// empty: a rule on the received audio (its Duration, RMS).
func (s *Server) AnswerTranscripts(f func(TranscribeRequest) Transcript) {
	s.mu.Lock()
	s.textRule = f
	s.mu.Unlock()
}

// Spoken is every speech request received, in order.
func (s *Server) Spoken() []SpeakRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SpeakRequest(nil), s.spoke...)
}

// Heard is every transcription request received, in order.
func (s *Server) Heard() []TranscribeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TranscribeRequest(nil), s.heard...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/audio/speech":
		s.speak(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/audio/transcriptions":
		s.transcribe(w, r)
	default:
		writeError(w, http.StatusNotFound, "not found")
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"speechtest"}}`, msg)
}

// wait sleeps d, false when the client went away first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		s.Canceled.Add(1)
		return false
	}
}

func (s *Server) speak(w http.ResponseWriter, r *http.Request) {
	var req SpeakRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.Input == "" {
		writeError(w, http.StatusBadRequest, "want JSON with input")
		return
	}
	req.Header, req.At = r.Header.Clone(), time.Now()
	s.mu.Lock()
	s.spoke = append(s.spoke, req)
	var a Speech
	switch {
	case len(s.speech) > 0:
		a, s.speech = s.speech[0], s.speech[1:]
	case s.speakRule != nil:
		a = s.speakRule(req)
	}
	s.mu.Unlock()
	if a.Hang {
		<-r.Context().Done()
		s.Canceled.Add(1)
		return
	}
	if !s.wait(r, a.FirstByte) {
		return
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		writeError(w, a.Status, "scripted failure")
		return
	}
	body, ctype, err := s.render(a, req)
	if err != nil {
		s.t.Errorf("speechtest: %v", err)
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", ctype)
	chunk := a.Chunk
	if chunk <= 0 {
		chunk = 4800
	}
	fl, _ := w.(http.Flusher)
	for i := 0; i < len(body); i += chunk {
		if i > 0 && !s.wait(r, a.ChunkDelay) {
			return
		}
		if _, err := w.Write(body[i:min(i+chunk, len(body))]); err != nil {
			s.Canceled.Add(1)
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// render is the answer's body in the format asked (or scripted).
func (s *Server) render(a Speech, req SpeakRequest) ([]byte, string, error) {
	format := a.Format
	if format == "" {
		format = req.ResponseFormat
	}
	if format == "mp3" || format == "" { // OpenAI's default; agentd must refuse it plainly
		return []byte("ID3\x04\x00\x00\x00\x00\x00\x00not really an mp3"), "audio/mpeg", nil
	}
	rate := a.Rate
	var pcm []int16
	switch {
	case a.PCM != nil:
		pcm = a.PCM
	case a.Tone != 0:
		d := a.Duration
		if d == 0 {
			d = 500 * time.Millisecond
		}
		if rate == 0 {
			rate = 24000
		}
		pcm = Tone(a.Tone, d, rate)
	default:
		text := a.Text
		if text == "" {
			text = req.Input
		}
		if rate == 0 && format == "pcm" {
			rate = 24000 // OpenAI's pcm rate
		}
		var err error
		if pcm, err = espeak(text, rate); err != nil {
			return nil, "", err
		}
		if rate == 0 {
			rate = 22050
		}
	}
	if rate == 0 {
		rate = 24000
	}
	if format == "pcm" {
		out := make([]byte, 0, 2*len(pcm))
		for _, v := range pcm {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
		return out, "audio/pcm", nil
	}
	ch := max(a.Channels, 1)
	if ch == 2 {
		st := make([]int16, 0, 2*len(pcm))
		for _, v := range pcm {
			st = append(st, v, v)
		}
		pcm = st
	}
	out := wav.Encode(wav.Format{Rate: rate, Channels: ch}, pcm)
	if !a.Sized {
		binary.LittleEndian.PutUint32(out[4:], 0xFFFFFFFF)
		binary.LittleEndian.PutUint32(out[40:], 0xFFFFFFFF)
	}
	return out, "audio/wav", nil
}

func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "want multipart/form-data")
		return
	}
	req := TranscribeRequest{Model: r.FormValue("model"), Language: r.FormValue("language"), Prompt: r.FormValue("prompt"),
		ResponseFormat: r.FormValue("response_format"), Header: r.Header.Clone(), At: time.Now()}
	f, _, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, "want a file")
		return
	}
	pcm, fm, err := wav.ReadAll(f)
	f.Close()
	if err != nil {
		writeError(w, http.StatusBadRequest, "file: "+err.Error())
		return
	}
	req.PCM, req.Format, req.RMS = pcm, fm, RMS(pcm)
	req.Duration = time.Duration(float64(len(pcm)/fm.Channels) / float64(fm.Rate) * float64(time.Second))
	s.mu.Lock()
	s.heard = append(s.heard, req)
	a := Transcript{Text: "hello"}
	switch {
	case len(s.texts) > 0:
		a, s.texts = s.texts[0], s.texts[1:]
	case s.textRule != nil:
		a = s.textRule(req)
	}
	s.mu.Unlock()
	if a.Hang {
		<-r.Context().Done()
		s.Canceled.Add(1)
		return
	}
	if !s.wait(r, a.Delay) {
		return
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		writeError(w, a.Status, "scripted failure")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"text": a.Text})
}
