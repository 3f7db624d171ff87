package widget

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strings"
)

// Script is widget.js: one file, no build step, no dependency, embedded in
// the binary. Its size is checked by a test (at most 30 KB gzipped).
//
//go:embed widget.js
var Script []byte

var (
	scriptGzip = func() []byte {
		var b bytes.Buffer
		z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		z.Write(Script)
		z.Close()
		return b.Bytes()
	}()
	scriptETag = func() string {
		s := sha256.Sum256(Script)
		return `"` + hex.EncodeToString(s[:8]) + `"`
	}()
)

// ServeScript serves GET /widget.js to any page (it holds no secret): short
// caching so a new release reaches sites soon, gzipped when accepted.
func ServeScript(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", scriptETag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Header.Get("If-None-Match") == scriptETag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := Script
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = scriptGzip
	}
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// Audio is the AudioWorklet of voice sessions (/widget-audio.js): the
// microphone down to 8 kHz frames, the agent's voice up to the page's rate.
//
//go:embed audio.js
var Audio []byte

// ServeAudio serves GET /widget-audio.js to any page: a worklet module is
// fetched with CORS, so the widget on another site needs the header.
func ServeAudio(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(Audio)
}
