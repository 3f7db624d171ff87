package speech

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/agentd/agentd/internal/wav"
)

// STT transcribes utterances through POST {base}/audio/transcriptions
// (multipart: file, a WAV of the utterance, model, language,
// response_format json), which OpenAI, Groq, speaches, whisper.cpp's
// server and LocalAI answer.
type STT struct{ c *client }

// NewSTT builds the client; with Kind none (or "") it returns nil, nil:
// voice agents stay silent.
func NewSTT(cfg Config) (*STT, error) {
	c, err := newClient(cfg, "--stt", ServiceSTT, "/audio/transcriptions", "whisper-1")
	if c == nil || err != nil {
		return nil, err
	}
	return &STT{c: c}, nil
}

// Host is the service's host (for logs; never the key).
func (s *STT) Host() string { return s.c.Host() }

// maxTranscript bounds what is read of an answer.
const maxTranscript = 1 << 20

// Transcribe sends one utterance (8 kHz mono) and returns its text. A
// failure of the service is an *Error (ErrUnavailable); ctx ending first
// returns ctx's error.
func (s *STT) Transcribe(ctx context.Context, req TranscribeRequest) (string, error) {
	body, ctype, err := s.form(req)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, s.c.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(cctx, http.MethodPost, s.c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", s.c.fail("", err)
	}
	hr.Header.Set("Content-Type", ctype)
	hr.Header.Set("Accept", "application/json")
	s.c.authorize(hr)
	resp, err := s.c.http.Do(hr)
	if err != nil {
		return "", s.failure(ctx, cctx, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTranscript))
	if err != nil {
		return "", s.failure(ctx, cctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", s.c.fail(httpDetail(resp.StatusCode, b), nil)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return strings.TrimSpace(string(b)), nil // a server answering text
	}
	var v struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(b, &v) != nil || v.Text == nil {
		return "", s.c.fail("the answer is not a transcript", nil)
	}
	return strings.TrimSpace(*v.Text), nil
}

func (s *STT) form(req TranscribeRequest) ([]byte, string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("file", "utterance.wav")
	if err != nil {
		return nil, "", err
	}
	fw.Write(wav.Encode(wav.Format{Rate: 8000, Channels: 1}, req.PCM))
	mw.WriteField("model", s.c.cfg.Model)
	mw.WriteField("response_format", "json")
	if lang := language(req.Language); lang != "" {
		mw.WriteField("language", lang)
	}
	if req.Prompt != "" {
		mw.WriteField("prompt", req.Prompt)
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), mw.FormDataContentType(), nil
}

// language turns a call's preferredLanguage ("de", "en-US", "pt_BR") into
// the ISO-639-1 code the API takes; anything else is left out (the
// service detects the language).
func language(l string) string {
	l, _, _ = strings.Cut(strings.ReplaceAll(l, "_", "-"), "-")
	l = strings.ToLower(strings.TrimSpace(l))
	if len(l) < 2 || len(l) > 3 {
		return ""
	}
	for _, r := range l {
		if r < 'a' || r > 'z' {
			return ""
		}
	}
	return l
}

// failure tells the caller going away from the service failing.
func (s *STT) failure(parent, cctx context.Context, err error) error {
	return failure(s.c, parent, cctx, err)
}

func failure(c *client, parent, cctx context.Context, err error) error {
	switch {
	case parent.Err() != nil:
		return parent.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return c.fail(fmt.Sprintf("no answer within %s", c.cfg.Timeout), err)
	}
	return c.fail("", err)
}

// httpDetail is "HTTP 503" and the start of the service's message.
func httpDetail(status int, body []byte) string {
	d := fmt.Sprintf("HTTP %d", status)
	var v struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Detail string `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		msg = v.Error.Message + v.Detail
	}
	if msg = strings.Join(strings.Fields(msg), " "); len(msg) > 200 {
		msg = msg[:200]
	}
	if msg != "" {
		d += ": " + msg
	}
	return d
}
