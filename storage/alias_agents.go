package storage

// The agents store (storage/agentstore): its types under their storage
// names.

import "github.com/agentd/agentd/storage/agentstore"

// Agent is a voice or chat agent of an organization.
type Agent = agentstore.Agent

// AgentFilter selects a page of an organization's agents.
type AgentFilter = agentstore.AgentFilter

// Worker is an agent as the workforce view (GET /api/v2/agents) shows it: no
// instructions, config or tools, but its call counters and jobs.
type Worker = agentstore.Worker

// Job is a piece of work assigned to one agent (the v2 worker's
// assignedJobs): status active|paused, triggerType manual|schedule|
// inbound_call|outbound_campaign|webhook, trustLevel supervised|
// semi_autonomous|autonomous.
type Job = agentstore.Job
