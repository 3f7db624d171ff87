package access

import (
	"context"
	"strings"
)

// V1Capability is the capability a /v1 request needs when the
// organization (or the server) enforces roles on /v1 (issue 27): reads
// need agent:read, writes the capability of their area. "" for routes
// outside the areas (they keep checking only the key).
func V1Capability(method, path string) string {
	if method == "GET" || method == "HEAD" {
		return CapAgentRead
	}
	for _, a := range []struct{ prefix, capability string }{
		{"/api/v1/agents", CapAgentWrite},
		{"/api/v1/calls", CapCallsWrite},
		{"/api/v1/dnc", CapCallsWrite},
		{"/api/v1/kb", CapKBWrite},
		{"/api/v1/listings", CapListingsWrite},
	} {
		if strings.HasPrefix(path, a.prefix) {
			return a.capability
		}
	}
	return ""
}

// EnforceV1Roles reports whether /v1 applies roles for the organization:
// the server flag, or the organization's setting. The caller asks only
// when a role lacks the capability, so the common request costs nothing;
// a read error enforces (refusing is the safe side).
func (db *Service) EnforceV1Roles(ctx context.Context, orgID string, serverFlag bool) bool {
	if serverFlag {
		return true
	}
	st, err := db.calls.GetOrgSettings(ctx, orgID)
	return err != nil || st.EnforceV1Roles
}
