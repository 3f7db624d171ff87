// Package access owns who may do what: organizations, users, roles and
// their capabilities, and API keys (their format, options and lifetime).
// The HTTP layer authenticates with it; the CLI creates keys with it.
package access

import (
	"errors"

	"github.com/agentd/agentd/storage/sqldb"
)

// Capabilities a role may hold (DECISIONS.md "Organizations, users, roles, keys").
const (
	CapAgentRead     = "agent:read"
	CapAgentWrite    = "agent:write"
	CapCallsWrite    = "calls:write"
	CapKBWrite       = "kb:write"
	CapListingsWrite = "listings:write"
	CapAPIKeyManage  = "apikey:manage"
	CapOrgManage     = "org:manage"
	CapMemberManage  = "member:manage"
	CapWebhookManage = "webhook:manage" // webhook endpoints, their secrets and deliveries
	CapEventsRead    = "events:read"    // the event log and its stream
	// CapSettingsManage changes the organization's settings (calling hours)
	// and lets a key place an immediate call outside calling hours.
	CapSettingsManage = "settings:manage"
	// Conversations: read transcripts; start, talk in and end them.
	CapConversationRead  = "conversation:read"
	CapConversationWrite = "conversation:write"
)

// Roles lists the roles in order of power.
var Roles = []string{"owner", "admin", "member", "viewer"}

var roleCaps = map[string]map[string]bool{
	"owner": set(CapAgentRead, CapAgentWrite, CapCallsWrite, CapKBWrite, CapListingsWrite, CapAPIKeyManage, CapOrgManage,
		CapMemberManage, CapWebhookManage, CapEventsRead, CapSettingsManage, CapConversationRead, CapConversationWrite),
	"admin": set(CapAgentRead, CapAgentWrite, CapCallsWrite, CapKBWrite, CapListingsWrite, CapAPIKeyManage,
		CapMemberManage, CapWebhookManage, CapEventsRead, CapSettingsManage, CapConversationRead, CapConversationWrite),
	"member": set(CapAgentRead, CapAgentWrite, CapCallsWrite, CapKBWrite, CapListingsWrite, CapEventsRead,
		CapConversationRead, CapConversationWrite),
	"viewer": set(CapAgentRead, CapConversationRead),
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// ValidRole reports whether r is a known role.
func ValidRole(r string) bool { _, ok := roleCaps[r]; return ok }

// Can reports whether role holds capability.
func Can(role, capability string) bool { return roleCaps[role][capability] }

func isNotFound(err error) bool { return errors.Is(err, sqldb.ErrNotFound) }

func isConflict(err error) bool { return errors.Is(err, sqldb.ErrConflict) }
