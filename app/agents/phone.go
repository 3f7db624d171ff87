package agents

import (
	"slices"

	"github.com/agentd/agentd/internal/clean"
)

// validatePhones cleans and checks phone numbers: E.164, unique, and only
// on voice agents.
func validatePhones(typ string, phones []string) ([]string, error) {
	if len(phones) == 0 {
		return []string{}, nil
	}
	if typ != "voice" {
		return nil, invalidf("phoneNumbers", "only voice agents have phone numbers")
	}
	if len(phones) > maxPhones {
		return nil, invalidf("phoneNumbers", "at most %d numbers", maxPhones)
	}
	out := make([]string, 0, len(phones))
	for i, p := range phones {
		path := "phoneNumbers." + itoa(i)
		c := clean.Phone(p)
		if !clean.IsE164(c) {
			return nil, invalidf(path, "%q is not an E.164 number (+ then 2 to 15 digits, e.g. +14155550100)", p)
		}
		if slices.Contains(out, c) {
			return nil, invalidf(path, "%s is listed twice", c)
		}
		out = append(out, c)
	}
	return out, nil
}
