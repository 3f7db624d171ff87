package api

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/kb"
)

// upload posts a file as multipart/form-data with the fields.
func (e *testEnv) upload(key, name string, data []byte, fields map[string]string) (int, []byte) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if name != "" {
		fw, _ := mw.CreateFormFile("file", name)
		fw.Write(data)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", e.url+"/api/v1/kb/sources/upload", &buf)
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(resp.Body)
	return resp.StatusCode, out.Bytes()
}

// Files and web pages through the API: an upload is converted and found
// by search, refusals name the file, a URL source is fetched at once and
// listed with its last fetch, and another organization sees none of it.
func TestKBUploadAndWebSources(t *testing.T) {
	e := newTestEnv(t, func(c *serveConfig) {
		c.Webhooks.AllowPrivate, c.Webhooks.Disabled = true, true
		c.KB.MinRefresh = time.Hour
	})
	col := e.createCollection(e.key, "files")
	code, body := e.upload(e.key, "prices.csv", []byte("Service,Price\nWhitening,250\n"), map[string]string{"collectionId": col, "metadata": `{"lang":"en"}`})
	if code != 200 || !strings.Contains(string(body), `"format":"csv"`) || !strings.Contains(string(body), `"status":"processing"`) {
		t.Fatalf("upload: %d %s", code, body)
	}
	for name, want := range map[string]string{"photo.png": "unsupported file type", "": "file is required"} {
		code, body := e.upload(e.key, name, []byte("\x89PNG\r\n\x1a\n\x00"), map[string]string{"collectionId": col})
		if code != 400 || !strings.Contains(string(body), want) {
			t.Errorf("%q: %d %s", name, code, body)
		}
	}
	if code, body := e.upload(e.key, "a.csv", []byte("a,b\n"), map[string]string{"collectionId": col, "metadata": "[1]"}); code != 400 || !strings.Contains(string(body), "metadata") {
		t.Errorf("bad metadata: %d %s", code, body)
	}
	e.waitProcessed(e.key, col)
	if hits := e.search(e.key, map[string]any{"collectionId": col, "query": "whitening", "mode": "keyword"}); len(hits.Results) == 0 ||
		!strings.Contains(hits.Results[0].Content, "| Whitening | 250 |") {
		t.Fatalf("search: %+v", hits)
	}

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hours" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<html><head><title>Hours</title></head><body><h1>Hours</h1><p>Open at 8.</p></body></html>")
	}))
	defer page.Close()
	var up struct{ Data kb.UpsertResult }
	if code := e.doJSON("POST", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": col, "url": page.URL + "/hours", "refreshInterval": "6h"}, &up); code != 200 ||
		up.Data.Status != "processing" || up.Data.ExternalID != page.URL+"/hours" {
		t.Fatalf("url source: %d %+v", code, up)
	}
	for _, bad := range []map[string]any{
		{"collectionId": col, "url": page.URL + "/missing"},
		{"collectionId": col, "url": page.URL + "/hours", "content": "# both"},
		{"collectionId": col, "url": page.URL + "/hours", "refreshInterval": "1s"},
	} {
		if code, _, b := e.do("POST", "/api/v1/kb/sources", e.key, bad); code != 400 {
			t.Errorf("%v: %d %s", bad, code, b)
		}
	}
	var ws struct {
		Data struct{ WebSources []kb.WebView }
	}
	if code := e.doJSON("GET", "/api/v1/kb/web-sources?collectionId="+col, e.key, nil, &ws); code != 200 || len(ws.Data.WebSources) != 1 ||
		ws.Data.WebSources[0].LastFetchedAt == nil || ws.Data.WebSources[0].RefreshInterval == nil {
		t.Fatalf("web sources: %d %+v", code, ws)
	}
	id := ws.Data.WebSources[0].ID

	// Another organization: not found, whatever it asks.
	_, other := e.newOrg("other")
	if code, _ := e.upload(other, "x.csv", []byte("a,b\n1,2\n"), map[string]string{"collectionId": col}); code != 404 {
		t.Errorf("foreign upload: %d", code)
	}
	if code, _, _ := e.do("GET", "/api/v1/kb/web-sources?collectionId="+col, other, nil); code != 404 {
		t.Errorf("foreign list: %d", code)
	}
	if code, _, _ := e.do("DELETE", "/api/v1/kb/web-sources/"+id, other, nil); code != 404 {
		t.Errorf("foreign delete: %d", code)
	}
	if code, _, _ := e.do("DELETE", "/api/v1/kb/web-sources/"+id, e.key, nil); code != 200 {
		t.Errorf("delete: %d", code)
	}
}
