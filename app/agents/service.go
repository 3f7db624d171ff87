package agents

import (
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Deps are the stores the agents feature uses.
type Deps struct {
	Agents *agentstore.Agents
	KB     *kbstore.Knowledge // an agent's knowledge collections must exist
	// Secrets seals the header values of mcp tools (nil: kept as given).
	Secrets sqldb.Sealer
}

// Service is the agents feature: the HTTP handlers in app, the dashboard
// and the CLI call the same methods.
type Service struct{ db Deps }

// New returns the agents feature over its stores.
func New(d Deps) *Service {
	d.Secrets = sqldb.OrPlainText(d.Secrets)
	return &Service{db: d}
}

// The agents store's records, named here so callers above the features
// (the dashboard) need no storage package.
type (
	Agent = agentstore.Agent
	Job   = agentstore.Job
)
