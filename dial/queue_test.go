package dial

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/storage"
)

// seedAgent makes an org and a voice agent to hang calls on.
func seedAgent(tb testing.TB, db *storage.DB) (string, string) {
	ctx := context.Background()
	org, err := db.CreateOrg(ctx, "q-"+filepath.Base(tb.TempDir()))
	if err != nil {
		tb.Fatal(err)
	}
	a, err := db.CreateAgent(ctx, storage.Agent{OrgID: org.ID, Name: "a", Type: "voice", Status: "active",
		PhoneNumbers: []string{"+15550001111"}})
	if err != nil {
		tb.Fatal(err)
	}
	return org.ID, a.ID
}
