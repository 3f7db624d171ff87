// Package baseurl is the one convention for the base URL of an
// OpenAI-compatible upstream (--llm-url, --openai-base-url, --stt-url,
// --tts-url): given with or without the trailing /v1, it is the same
// service, and the operation's path is appended after /v1.
package baseurl

import (
	"errors"
	"net/url"
	"strings"
)

// V1 parses an http(s) base URL, with or without a trailing /v1 (and
// slashes), and returns it ending in /v1, without a trailing slash.
func V1(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("required, e.g. http://127.0.0.1:11434/v1")
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("use an http or https base URL, e.g. http://127.0.0.1:11434/v1")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	u.RawPath = ""
	return u, nil
}
