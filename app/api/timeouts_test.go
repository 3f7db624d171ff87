package api

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A client sending its body a byte at a time is cut off at the read
// timeout (issue 27 item 8: with only ReadHeaderTimeout, one byte every 6 s
// kept the connection open for good).
func TestSlowBodyIsCutOff(t *testing.T) {
	e := newTestEnv(t, func(c *serveConfig) { c.ReadTimeout = time.Second })
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "POST /api/v2/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, conn) // returns when the server closes
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case d := <-closed:
			if d > 3*time.Second {
				t.Fatalf("closed after %v", d)
			}
			return
		case <-tick.C:
			conn.Write([]byte(" "))
			if time.Since(start) > 6*time.Second {
				t.Fatal("a body sent one byte every 300 ms is still being read after 6 s (read timeout 1 s)")
			}
		}
	}
}

// A long-lived event stream is not cut by the read timeout (net/http
// clears the deadline once the body is read; this keeps it so).
func TestReadTimeoutSparesStreams(t *testing.T) {
	e := newTestEnv(t, fastWebhooks, func(c *serveConfig) { c.ReadTimeout = time.Second })
	rc := newReceiver(t, nil)
	whID, _ := e.createWebhook(e.key, rc.srv.URL, "*")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/v2/events/stream", nil)
	req.Header.Set("x-api-key", e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Twice the read timeout: the test is that the server cuts a client
	// that stays silent this long, so the silence itself must last.
	time.Sleep(2 * time.Second)
	if code, _, b := e.do("POST", "/api/v2/webhooks/"+whID+"/test", e.key, nil); code >= 300 {
		t.Fatalf("test ping: %d %s", code, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ping") {
			return
		}
	}
	t.Fatalf("the stream ended before the event: %v", sc.Err())
}
