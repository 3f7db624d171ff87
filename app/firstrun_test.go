package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// The first start prints the owner key; a second start on the same
// database prints none and says why, naming the command that makes one
// (issue 26: after the README's first command the quick start printed
// nothing at all).
func TestSecondStartSaysWhyNoKey(t *testing.T) {
	path := dbtest.Path(t, "a.db")
	for i := range 2 {
		var out, logs bytes.Buffer
		a, err := Open(context.Background(), Config{DBPath: path, Addr: "127.0.0.1:0", Out: &out,
			Log: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
		printed := strings.Contains(out.String(), "owner API key: agd_")
		explained := strings.Contains(logs.String(), "no API key printed") && strings.Contains(logs.String(), "agentd key create")
		if (i == 0) != printed || (i == 1) != explained {
			t.Fatalf("start %d: out %q logs %q", i+1, out.String(), logs.String())
		}
	}
}
