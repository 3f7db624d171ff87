package speech

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/baseurl"
)

// The services, as failure reasons name them.
const (
	ServiceSTT = "speech-to-text"
	ServiceTTS = "text-to-speech"
)

// Config selects one speech service (serve's --stt* or --tts* flags).
type Config struct {
	Kind    string        // openai, or none / "" (off: NewSTT and NewTTS return nil)
	URL     string        // base URL, with or without the trailing /v1
	Model   string        // e.g. whisper-1, tts-1
	APIKey  string        // sent as Authorization: Bearer when set
	Timeout time.Duration // bounds the wait for an answer (TTS: for each piece of audio); 0: 10 s
	Client  *http.Client  // nil: a client of its own
	// Format is the audio TTS asks for: wav (default; the header gives the
	// rate) or pcm (raw 16-bit at 24 kHz, OpenAI's). Either answer is read.
	Format string
}

// Enabled is whether the service is on (Kind not none).
func (c Config) Enabled() bool {
	k := strings.ToLower(c.Kind)
	return k != "" && k != "none"
}

// Error is a speech service failing to answer; it is ErrUnavailable.
type Error struct {
	Service string // ServiceSTT or ServiceTTS
	Detail  string // "HTTP 503", "timed out after 10s", ...
	Err     error
}

func (e *Error) Error() string { return e.Service + " service unavailable: " + e.Detail }

// Is makes every Error match ErrUnavailable.
func (e *Error) Is(target error) bool { return target == ErrUnavailable }

func (e *Error) Unwrap() error { return e.Err }

// Reason is the failure reason a call records for err: "speech-to-text
// service unavailable" for an Error, "" otherwise.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Service + " service unavailable"
	}
	return ""
}

// client is what STT and TTS share: the endpoint, the key, the timeout.
type client struct {
	service  string
	endpoint string // full URL of the operation
	host     string
	cfg      Config
	http     *http.Client
}

// newClient checks cfg for the service whose flags start with flag
// ("--stt"); nil when the service is off.
func newClient(cfg Config, flag, service, path, defModel string) (*client, error) {
	switch cfg.Kind = strings.ToLower(cfg.Kind); cfg.Kind {
	case "", "none":
		return nil, nil
	case "openai":
	default:
		return nil, fmt.Errorf("%s %q: use openai or none", flag, cfg.Kind)
	}
	base, err := baseurl.V1(cfg.URL) // with or without /v1: the same service
	if err != nil {
		return nil, fmt.Errorf("%s-url %q: %v", flag, cfg.URL, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%s-timeout must not be negative", flag)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Model == "" {
		cfg.Model = defModel
	}
	switch cfg.Format {
	case "":
		cfg.Format = "wav"
	case "wav", "pcm":
	default:
		return nil, fmt.Errorf("speech format %q: use wav or pcm", cfg.Format)
	}
	c := cfg.Client
	if c == nil {
		c = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &client{service: service, endpoint: base.String() + path, host: base.Host, cfg: cfg, http: c}, nil
}

// Host is the service's host, for logs and the doctor (never the key).
func (c *client) Host() string { return c.host }

// fail builds the Error of a failed request: a transport error is named
// without its URL (which may carry credentials).
func (c *client) fail(detail string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if err != nil && detail == "" {
		detail = err.Error()
	}
	return &Error{Service: c.service, Detail: detail, Err: err}
}

func (c *client) authorize(r *http.Request) {
	if c.cfg.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}
