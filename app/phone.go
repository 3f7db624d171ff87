package app

import "github.com/agentd/agentd/app/clean"

// cleanPhone and validE164 keep the agent input rules (agents_input.go) on
// the shared cleaning of app/clean, which the calls feature uses too.
func cleanPhone(s string) string { return clean.Phone(s) }

func validE164(s string) bool { return clean.IsE164(s) }
