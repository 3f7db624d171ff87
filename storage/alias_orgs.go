package storage

// The organizations store (storage/orgstore): its types under their
// storage names.

import "github.com/agentd/agentd/storage/orgstore"

// NewKey is a key to store: its secret is already hashed by the caller.
type NewKey = orgstore.NewKey

// APIKey is a stored key, without its secret.
type APIKey = orgstore.APIKey

// KeyAuth is what authentication needs to know about a presented key: the
// creator's current role comes from the users table, so a role change or a
// removal takes effect on the next lookup.
type KeyAuth = orgstore.KeyAuth

// Org is an organization: the unit every piece of data is scoped to.
type Org = orgstore.Org

// User is a person's membership of one organization, with a role.
type User = orgstore.User

// Session is a signed-in dashboard user, as authentication needs it: the role
// comes from the users table, so a role change or a removal takes effect on
// the next request.
type Session = orgstore.Session

// UserLogin is a user row with its password hash, for sign-in.
type UserLogin = orgstore.UserLogin

// Admission is the answer of AdmitRate.
type Admission = orgstore.Admission
