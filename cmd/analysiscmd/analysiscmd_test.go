package analysiscmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/agenttest"
)

// agentd test refuses a file beyond agenttest.MaxFileBytes and a YAML
// alias bomb before any call to the server (none is running here).
func TestTestFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, append([]byte("scenarios: []\n#"), bytes.Repeat([]byte("x"), agenttest.MaxFileBytes)...), 0o600)
	bomb := filepath.Join(dir, "bomb.yaml")
	os.WriteFile(bomb, []byte("x: &a \""+strings.Repeat("A", 31<<10)+"\"\nscenarios: ["+strings.Repeat("*a,", 20000)+"*a]\n"), 0o600)
	for file, want := range map[string]string{big: "max 1048576", bomb: "YAML aliases"} {
		test := Commands()[0]
		test.SetArgs([]string{"--agent", "a1", "--server", "http://127.0.0.1:1", "--api-key", "k", file})
		test.SetOut(&bytes.Buffer{})
		test.SetErr(&bytes.Buffer{})
		began := time.Now()
		err := test.Execute()
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("%s: %v", filepath.Base(file), err)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Errorf("%s refused in %s", filepath.Base(file), d)
		}
	}
}
