package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentd/agentd/internal/baseurl"
)

// OpenAIConfig configures an OpenAI-compatible embeddings service: OpenAI,
// Ollama, LM Studio, vLLM, llama.cpp server, Hugging Face TEI.
type OpenAIConfig struct {
	// BaseURL is the service root, e.g. https://api.openai.com or
	// http://127.0.0.1:11434; "/v1/embeddings" is appended (a trailing
	// "/v1" is accepted too).
	BaseURL string
	// APIKey is sent as a bearer token when set. It never appears in errors.
	APIKey string
	// Model is the model name sent with each request.
	Model string
	// Dimensions is the vector length the model returns; every vector is
	// checked against it.
	Dimensions int
	// SendDimensions sends "dimensions" in the request, for models that
	// can shorten their vectors (OpenAI text-embedding-3-*); many servers
	// reject the field, so it is off unless asked for.
	SendDimensions bool
	// BatchSize is the number of texts per request (default 64).
	BatchSize int
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// Concurrency is the number of requests in flight (default 2).
	Concurrency int
	// MaxRetries is the number of retries after a 429, 5xx, timeout or
	// network error (default 5; negative for none).
	MaxRetries int
	// BackoffBase is the first retry delay, doubled on each retry with
	// jitter, up to BackoffMax (defaults 500 ms and 30 s). A Retry-After
	// header wins when present.
	BackoffBase, BackoffMax time.Duration
	// HTTPClient is the client to use (default: a plain http.Client).
	HTTPClient *http.Client
}

// maxRetryAfter caps a server's Retry-After, so a bogus header cannot park
// the worker for hours.
const maxRetryAfter = 5 * time.Minute

// OpenAI embeds through an OpenAI-compatible POST /v1/embeddings endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
}

// NewOpenAI validates cfg, fills in defaults and returns the embedder.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := baseurl.V1(cfg.BaseURL) // with or without /v1: the same service
	if err != nil {
		return nil, fmt.Errorf("openai embedder: base URL %q: %v", cfg.BaseURL, err)
	}
	switch {
	case strings.TrimSpace(cfg.Model) == "":
		return nil, errors.New("openai embedder: model is required")
	case cfg.Dimensions <= 0 || cfg.Dimensions > 65536:
		return nil, fmt.Errorf("openai embedder: dimensions %d, want 1 to 65536", cfg.Dimensions)
	case cfg.BatchSize < 0 || cfg.BatchSize > 2048:
		return nil, fmt.Errorf("openai embedder: batch size %d, want 1 to 2048", cfg.BatchSize)
	case cfg.Concurrency < 0 || cfg.Concurrency > 64:
		return nil, fmt.Errorf("openai embedder: concurrency %d, want 1 to 64", cfg.Concurrency)
	case cfg.Timeout < 0 || cfg.BackoffBase < 0 || cfg.BackoffMax < 0:
		return nil, errors.New("openai embedder: negative timeout or backoff")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 64
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 2
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = 500 * time.Millisecond
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	endpoint := u.String() + "/embeddings"
	return &OpenAI{cfg: cfg, endpoint: endpoint}, nil
}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Model is the configured model name.
func (o *OpenAI) Model() string { return o.cfg.Model }

// Dimensions is the configured vector length.
func (o *OpenAI) Dimensions() int { return o.cfg.Dimensions }

// Embed returns one L2-normalised vector per text, in input order. Texts go
// in batches, Concurrency requests at a time; the first batch that fails
// after its retries fails the call with an error wrapping ErrEmbedder (or
// the context's error when ctx ended).
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.cfg.Concurrency)
	for start := 0; start < len(texts); start += o.cfg.BatchSize {
		end := min(start+o.cfg.BatchSize, len(texts))
		g.Go(func() error {
			vecs, err := o.batch(gctx, texts[start:end])
			if err != nil {
				return err
			}
			copy(out[start:end], vecs)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return out, nil
}

// batch embeds one batch with retries.
func (o *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := o.requestBody(texts)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := o.try(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if retryAfter < 0 || attempt >= o.cfg.MaxRetries {
			if retryAfter >= 0 {
				err = unavailable(fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1))
			}
			return nil, err
		}
		wait := retryAfter
		if wait == 0 {
			wait = o.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// backoff is BackoffBase*2^attempt capped at BackoffMax, with jitter in
// [d/2, d] so that clients that failed together do not retry together.
func (o *OpenAI) backoff(attempt int) time.Duration {
	d := o.cfg.BackoffBase << min(attempt, 30)
	if d <= 0 || d > o.cfg.BackoffMax {
		d = o.cfg.BackoffMax
	}
	return d/2 + rand.N(d/2+1)
}

func (o *OpenAI) requestBody(texts []string) ([]byte, error) {
	req := struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions,omitempty"`
	}{Model: o.cfg.Model, Input: texts}
	if o.cfg.SendDimensions {
		req.Dimensions = o.cfg.Dimensions
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %v", ErrEmbedder, err)
	}
	return b, nil
}

// try sends one request. retryAfter is -1 when the error is final, 0 to
// retry after the usual backoff, or the server's Retry-After delay.
func (o *OpenAI) try(ctx context.Context, body []byte, n int) (vecs [][]float32, retryAfter time.Duration, err error) {
	rctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("%w: %v", ErrEmbedder, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		// Network errors and the per-request timeout are worth a retry.
		return nil, 0, o.errorf("request failed: %v", o.redact(errors.Unwrap(err)))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, o.errorf("reading response: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		err := o.errorf("HTTP %d: %s", resp.StatusCode, o.serverMessage(data))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), err
		}
		return nil, -1, err
	}
	vecs, err = o.decode(data, n)
	if err != nil {
		return nil, -1, err
	}
	return vecs, 0, nil
}

// decode checks a response: exactly n items, each index once, each vector
// of the configured length; it returns them in index order, normalised.
func (o *OpenAI) decode(data []byte, n int) ([][]float32, error) {
	var resp struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, o.errorf("bad JSON in response: %v", err)
	}
	if len(resp.Data) != n {
		return nil, o.errorf("sent %d texts, got %d embeddings", n, len(resp.Data))
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index == nil || *d.Index < 0 || *d.Index >= n {
			return nil, o.errorf("embedding with missing or out-of-range index")
		}
		if out[*d.Index] != nil {
			return nil, o.errorf("index %d returned twice", *d.Index)
		}
		if len(d.Embedding) != o.cfg.Dimensions {
			return nil, o.errorf("model %q returned %d dimensions, configured %d", o.cfg.Model, len(d.Embedding), o.cfg.Dimensions)
		}
		normalize(d.Embedding)
		out[*d.Index] = d.Embedding
	}
	return out, nil
}

func (o *OpenAI) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: openai %s: %s", ErrEmbedder, o.endpoint, o.redact(fmt.Sprintf(format, args...)))
}

// redact removes the API key from anything that might echo it.
func (o *OpenAI) redact(v any) string {
	s := fmt.Sprint(v)
	if o.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, o.cfg.APIKey, "[redacted]")
	}
	return s
}

// serverMessage is the error message of an OpenAI-style error body, or the
// start of the body.
func (o *OpenAI) serverMessage(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			data = []byte(obj.Message)
		case json.Unmarshal(e.Error, &str) == nil:
			data = []byte(str)
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date. It
// returns 0 (use the usual backoff) when absent or unreadable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(h, 64); err == nil {
		if secs <= 0 || secs != secs {
			return 0
		}
		d = time.Duration(min(secs, maxRetryAfter.Seconds()) * float64(time.Second))
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}
