package agents

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentd/agentd/internal/clean"
)

// A voice agent's call control settings (app/voice): what a call answered
// by a machine does, and where transfer_call may hand a call.

// Voicemail is config.voicemail: hang up on a machine, or leave the
// message after its beep.
type Voicemail struct {
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

func configVoicemail(field string, raw json.RawMessage) (Voicemail, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return Voicemail{}, invalidf(field, "must be an object {action, message}")
	}
	var v Voicemail
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := m[k]
		switch k {
		case "action":
			s, err := configString(field+".action", r, 1, 20)
			if err != nil || (s != "hangup" && s != "leave_message") {
				return Voicemail{}, invalidf(field+".action", "must be hangup or leave_message")
			}
			v.Action = s
		case "message":
			s, err := configString(field+".message", r, 0, 1000)
			if err != nil {
				return Voicemail{}, err
			}
			v.Message = strings.TrimSpace(s)
		default:
			return Voicemail{}, invalidf(field+"."+k, "not a field of voicemail (allowed: action, message)")
		}
	}
	switch {
	case v.Action == "":
		return Voicemail{}, invalidf(field+".action", "is required: hangup or leave_message")
	case v.Action == "leave_message" && v.Message == "":
		return Voicemail{}, invalidf(field+".message", "is required to leave a message")
	}
	return v, nil
}

// TransferDestination is one of config.transferDestinations.
type TransferDestination struct {
	Name        string `json:"name"`
	Number      string `json:"number,omitempty"`
	SIPURI      string `json:"sipUri,omitempty"`
	Description string `json:"description,omitempty"`
	Mode        string `json:"mode"`
}

// maxTransferDestinations bounds the list the model chooses from.
const maxTransferDestinations = 20

func configTransfers(field string, raw json.RawMessage) ([]TransferDestination, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalidf(field, "must be an array of {name, number or sipUri, description, mode}")
	}
	if len(items) > maxTransferDestinations {
		return nil, invalidf(field, "at most %d destinations", maxTransferDestinations)
	}
	out := make([]TransferDestination, 0, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		f := fmt.Sprintf("%s.%d", field, i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(it, &m); err != nil || m == nil {
			return nil, invalidf(f, "must be an object {name, number or sipUri, description, mode}")
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := TransferDestination{Mode: "cold"}
		for _, k := range keys {
			var err error
			switch k {
			case "name":
				d.Name, err = configString(f+".name", m[k], 1, 100)
			case "number":
				d.Number, err = configString(f+".number", m[k], 1, 20)
				if err == nil && !clean.IsE164(d.Number) {
					err = invalidf(f+".number", "must be an E.164 number (+14155550100)")
				}
			case "sipUri":
				d.SIPURI, err = configString(f+".sipUri", m[k], 5, 500)
				if err == nil && !validSIPURI(d.SIPURI) {
					err = invalidf(f+".sipUri", "must be a sip: URI (sip:desk@pbx.example.com)")
				}
			case "description":
				d.Description, err = configString(f+".description", m[k], 0, 500)
			case "mode":
				d.Mode, err = configString(f+".mode", m[k], 1, 10)
				if err == nil && d.Mode != "cold" && d.Mode != "warm" {
					err = invalidf(f+".mode", "must be cold or warm")
				}
			default:
				err = invalidf(f+"."+k, "not a field of a transfer destination (allowed: name, number, sipUri, description, mode)")
			}
			if err != nil {
				return nil, err
			}
		}
		d.Name = strings.TrimSpace(d.Name)
		switch {
		case d.Name == "":
			return nil, invalidf(f+".name", "is required")
		case seen[strings.ToLower(d.Name)]:
			return nil, invalidf(f+".name", "%q is named twice", d.Name)
		case (d.Number == "") == (d.SIPURI == ""):
			return nil, invalidf(f, "needs a number or a sipUri, not both")
		}
		seen[strings.ToLower(d.Name)] = true
		out = append(out, d)
	}
	return out, nil
}

// validSIPURI accepts sip:[user@]host[:port] without spaces or brackets.
func validSIPURI(s string) bool {
	if !strings.HasPrefix(strings.ToLower(s), "sip:") || strings.ContainsAny(s, " <>\"\t\r\n") {
		return false
	}
	rest := s[4:]
	if _, after, ok := strings.Cut(rest, "@"); ok {
		rest = after
	}
	host, _, _ := strings.Cut(rest, ";")
	return host != "" && !strings.HasPrefix(host, ":")
}
