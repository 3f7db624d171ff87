package api

import (
	"testing"

	"github.com/agentd/agentd/app/access"
)

// /v1 checks only that a key is valid, as the contract says: a viewer's key
// writes there by default. The organization setting enforceV1Roles (and
// the server flag) makes /v1 apply the role's capabilities too (issue 27).
func TestV1RolesEnforcedBySetting(t *testing.T) {
	e := newTestEnv(t)
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	create := func() int {
		code, _, _ := e.do("POST", "/api/v1/agents", viewer, map[string]any{"name": "v", "type": "chat"})
		return code
	}
	if code := create(); code != 201 {
		t.Fatalf("default: a viewer's /v1 write got %d, want 201 (the contract)", code)
	}
	var st struct{ Data struct{ EnforceV1Roles bool } }
	if code := e.doJSON("PATCH", "/api/v2/organization/settings", e.key, map[string]any{"enforceV1Roles": true}, &st); code != 200 || !st.Data.EnforceV1Roles {
		t.Fatalf("enable: %d %+v", code, st)
	}
	if code := create(); code != 403 {
		t.Fatalf("enforced: a viewer's /v1 write got %d, want 403", code)
	}
	if code, _, _ := e.do("GET", "/api/v1/agents", viewer, nil); code != 200 {
		t.Fatalf("enforced: a viewer's /v1 read got %d", code)
	}
	// Another organization keeps the default.
	otherOrg, _ := e.newOrg("other")
	otherViewer := e.keyWithRole(otherOrg, "viewer", access.KeyOptions{})
	if code, _, _ := e.do("POST", "/api/v1/agents", otherViewer, map[string]any{"name": "v", "type": "chat"}); code != 201 {
		t.Fatalf("another organization: %d, want 201", code)
	}
	// A viewer cannot turn it off.
	if code, _, _ := e.do("PATCH", "/api/v2/organization/settings", viewer, map[string]any{"enforceV1Roles": false}); code != 403 {
		t.Fatalf("viewer changes the setting: %d", code)
	}
}

// The server flag enforces it for every organization.
func TestV1RolesEnforcedByFlag(t *testing.T) {
	e := newTestEnv(t, func(c *serveConfig) { c.EnforceV1Roles = true })
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	if code, _, _ := e.do("POST", "/api/v1/agents", viewer, map[string]any{"name": "v", "type": "chat"}); code != 403 {
		t.Fatalf("flag: a viewer's /v1 write got %d, want 403", code)
	}
	member := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	if code, _, _ := e.do("POST", "/api/v1/agents", member, map[string]any{"name": "m", "type": "chat"}); code != 201 {
		t.Fatalf("flag: a member's /v1 write got %d", code)
	}
}
