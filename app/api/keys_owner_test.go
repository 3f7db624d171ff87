package api

import (
	"testing"

	"github.com/agentd/agentd/app/access"
)

// An admin cannot revoke an owner's key (issue 27 item 6): the member
// rules say only an owner touches an owner, and keys follow them. The admin
// still revokes other admins' and members' keys, and an owner revokes any.
func TestAdminCannotRevokeOwnerKeys(t *testing.T) {
	e := newTestEnv(t)
	admin := e.keyWithRole(e.orgID, "admin", access.KeyOptions{})
	ownerKey := func() string {
		var out struct{ Data struct{ ID string } }
		if code := e.doJSON("POST", "/api/v2/api-keys", e.key, map[string]any{"name": "owner-2"}, &out); code != 201 {
			t.Fatalf("create: %d", code)
		}
		return out.Data.ID
	}
	id := ownerKey()
	code, _, b := e.do("DELETE", "/api/v2/api-keys/"+id, admin, nil)
	if code != 403 {
		t.Fatalf("admin revokes an owner's key: %d %s, want 403", code, b)
	}
	if code, _, _ := e.do("GET", "/api/v2/api-keys", e.key, nil); code != 200 {
		t.Fatal("the owner's key stopped working")
	}
	var list struct {
		Data struct{ Keys []struct{ ID, Status string } }
	}
	e.doJSON("GET", "/api/v2/api-keys", e.key, nil, &list)
	for _, k := range list.Data.Keys {
		if k.ID == id && k.Status != "active" {
			t.Fatalf("the refused revocation changed the key: %s", k.Status)
		}
	}
	// An admin's own key: the admin may.
	var mine struct{ Data struct{ ID string } }
	e.doJSON("POST", "/api/v2/api-keys", admin, map[string]any{"name": "admin-2"}, &mine)
	if code, _, b := e.do("DELETE", "/api/v2/api-keys/"+mine.Data.ID, admin, nil); code != 200 {
		t.Fatalf("admin revokes an admin key: %d %s", code, b)
	}
	if code, _, b := e.do("DELETE", "/api/v2/api-keys/"+id, e.key, nil); code != 200 {
		t.Fatalf("owner revokes an owner key: %d %s", code, b)
	}
	// Another organization's owner key is still 404 for an admin, not 403.
	_, otherOwner := e.newOrg("other")
	var o struct{ Data struct{ ID string } }
	e.doJSON("POST", "/api/v2/api-keys", otherOwner, map[string]any{"name": "x"}, &o)
	if code, _, _ := e.do("DELETE", "/api/v2/api-keys/"+o.Data.ID, admin, nil); code != 404 {
		t.Fatalf("other org's key: %d, want 404", code)
	}
}
