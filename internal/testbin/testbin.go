// Package testbin builds the agentd binary for the tests that run it as a
// child process (kill -9, CLI, the reliability suite).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
