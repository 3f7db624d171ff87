// Package testbin builds the agentd binary for the tests that run it as a
// child process (kill -9, CLI, the reliability suite), and what those
// tests share.
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Build compiles agentd as it ships (CGO_ENABLED=0) into dir and returns the
// binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "agentd")
	c := exec.Command("go", "build", "-o", bin, "github.com/agentd/agentd")
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Main is a TestMain body for packages that run the binary: it builds it
// into a temporary folder, sets *bin, runs the tests, removes the folder
// and returns the exit code for os.Exit.
func Main(m interface{ Run() int }, bin *string) int {
	dir, err := os.MkdirTemp("", "agentd-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Buffer is a bytes.Buffer safe for concurrent writers: tests capture a
// server's log in one while it serves.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
