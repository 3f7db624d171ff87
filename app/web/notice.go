package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// A notice (the "Agent saved" line after a form) travels in the redirect's
// query, so anyone could link to a page with text of their choosing in it
// (phishing on our own origin, issue 27 item 10). Only notices the server
// chose are shown: redirect adds a MAC of the text under a key made when the
// process starts, and render shows a notice only when its MAC checks out.
// A notice carried to another process (or across a restart) is dropped,
// which costs one line of feedback and nothing else.
var noticeKey = func() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}()

// noticeMAC is the MAC of a notice's text, URL-safe.
func noticeMAC(text string) string {
	m := hmac.New(sha256.New, noticeKey)
	m.Write([]byte("notice\x00" + text))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// requestNotice is the notice of a GET request when the server made it.
func requestNotice(r *http.Request) string {
	q := r.URL.Query()
	text, mac := q.Get("notice"), q.Get("ns")
	if text == "" || !hmac.Equal([]byte(mac), []byte(noticeMAC(text))) {
		return ""
	}
	return text
}
