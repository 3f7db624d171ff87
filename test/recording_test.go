package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/wav"
)

// orgIDs maps organization names to ids (agentd org list).
func (s *server) orgIDs() map[string]string {
	s.t.Helper()
	var orgs []struct{ ID, Name string }
	if err := json.Unmarshal([]byte(s.cli("org", "list", "--json")), &orgs); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range orgs {
		out[o.Name] = o.ID
	}
	return out
}

// A call's recording is served to its organization as audio/wav, with
// Range requests, and is not found for any other; the call read names it.
// The recording is the file agentd keeps in <dir>/<org>/<call>.wav.
func TestCallRecording(t *testing.T) {
	dir := t.TempDir()
	recDir := filepath.Join(dir, "recordings")
	s := start(t, dir, "--recording-dir", recDir)
	ids := seed(t, s, s.Key)
	keyB := s.newOrg("orgb")
	orgs := s.orgIDs()
	orgA := ""
	for name, id := range orgs {
		if name != "orgb" {
			orgA = id
		}
	}
	callA := ids["/api/v1/calls/{id}"]
	path := "/api/v1/calls/" + callA + "/recording"

	// No recording yet: 404 in the calls' error shape, no recordingUrl.
	if r := s.must("GET", path, s.Key, nil); r.status != 404 || !strings.Contains(string(r.body), "recording not found") {
		t.Fatalf("before: %d %s", r.status, r.body)
	}
	if r := s.must("GET", "/api/v1/calls/"+callA, s.Key, nil); strings.Contains(string(r.body), "recordingUrl") {
		t.Fatalf("recordingUrl without a recording: %s", r.body)
	}

	pcm := make([]int16, 2*8000) // 1 s of stereo: caller left, agent right
	for i := 0; i < len(pcm); i += 2 {
		pcm[i], pcm[i+1] = int16(i), -int16(i)
	}
	file := wav.Encode(wav.Format{Rate: 8000, Channels: 2}, pcm)
	writeRecording(t, filepath.Join(recDir, orgA, callA+".wav"), file)
	// The same call id in B's folder does not make it B's.
	writeRecording(t, filepath.Join(recDir, orgs["orgb"], callA+".wav"), file)

	r := s.must("GET", path, s.Key, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "audio/wav" || !bytes.Equal(r.body, file) {
		t.Fatalf("GET recording: %d %q %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	req.Header.Set("x-api-key", s.Key)
	req.Header.Set("Range", "bytes=44-1043")
	rr, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var part bytes.Buffer
	part.ReadFrom(rr.Body)
	rr.Body.Close()
	if rr.StatusCode != 206 || !bytes.Equal(part.Bytes(), file[44:1044]) {
		t.Fatalf("Range: %d, %d bytes", rr.StatusCode, part.Len())
	}
	var read struct {
		Data struct {
			RecordingURL string `json:"recordingUrl"`
		} `json:"data"`
	}
	json.Unmarshal(s.must("GET", "/api/v1/calls/"+callA, s.Key, nil).body, &read)
	if read.Data.RecordingURL != path {
		t.Fatalf("recordingUrl %q, want %q", read.Data.RecordingURL, path)
	}

	// Organization B: A's recording is not found, whatever its folder holds.
	if r := s.must("GET", path, keyB, nil); r.status != 404 || bytes.Contains(r.body, []byte("RIFF")) {
		t.Fatalf("org B: %d %s", r.status, trunc(r.body))
	}
	if r := s.must("GET", "/api/v1/calls/../calls/"+callA+"/recording", keyB, nil); r.status == 200 {
		t.Fatal("org B reached A's recording through ..")
	}
}

// The retention worker deletes recordings older than
// --recording-retention once the server runs, and logs it.
func TestRecordingRetention(t *testing.T) {
	dir := t.TempDir()
	recDir := filepath.Join(dir, "recordings")
	old := filepath.Join(recDir, "org", "old-call.wav")
	fresh := filepath.Join(recDir, "org", "fresh-call.wav")
	file := wav.Encode(wav.Format{Rate: 8000, Channels: 2}, make([]int16, 320))
	writeRecording(t, old, file)
	writeRecording(t, fresh, file)
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, past, past)
	s := start(t, dir, "--recording-dir", recDir, "--recording-retention", "1h")
	testkit.Eventually(t, 10*time.Second, func() bool { _, err := os.Stat(old); return os.IsNotExist(err) },
		"the expired recording is still there")
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a recording within the retention was deleted: %v", err)
	}
	if !testkit.Within(10*time.Second, func() bool { return strings.Contains(s.Logs.String(), "deleted expired recordings") }) {
		t.Fatalf("no log line; logs:\n%s", s.Logs.String())
	}
}

func writeRecording(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
