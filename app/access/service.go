package access

import (
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/orgstore"
)

// Deps are the stores access reads and writes: organizations, users,
// keys and sessions, and the org settings (the v1 roles switch).
type Deps struct {
	Orgs  *orgstore.Orgs
	Calls *callstore.Calls
}

// Service is sign-in, keys, members and roles over its stores, built once
// by app/features.
type Service struct {
	orgs  *orgstore.Orgs
	calls *callstore.Calls
}

// New returns the access service over d.
func New(d Deps) *Service { return &Service{orgs: d.Orgs, calls: d.Calls} }

// The organizations store's records, named here so callers above the
// features (the dashboard) need no storage package.
type (
	APIKey  = orgstore.APIKey
	User    = orgstore.User
	Session = orgstore.Session
)
