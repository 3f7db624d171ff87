package agents

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/storage/agentstore"
)

// Agent limits (README "Agents"): API.md leaves them open.
const (
	maxName            = 200
	maxModel           = 200
	maxInstructions    = 100_000
	maxLabel           = 200 // specialty, displayRole
	maxTools           = 128
	maxToolText        = 200 // tool id and name
	maxToolDescription = 2_000
	maxPhones          = 20
	maxAllowedDomains  = 100
	// maxAgentConcurrency bounds a voice agent's maxConcurrentCalls.
	maxAgentConcurrency = 1000
)

var (
	agentTypes    = []string{"voice", "chat"}
	agentStatuses = []string{"active", "inactive", "training", "deployed"}
	chatPositions = []string{"bottom-right", "bottom-left", "top-right", "top-left"}
	hexColorRE    = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	domainLabelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// Input is an agent create or partial update, as the API body or the CLI
// flags give it. A nil (or JSON null) field is absent: on update it keeps
// the stored value. config, tools and phoneNumbers replace the stored value
// as a whole.
type Input struct {
	Name         *string         `json:"name"`
	Type         *string         `json:"type"`
	Status       *string         `json:"status"`
	Model        *string         `json:"model"`
	Instructions *string         `json:"instructions"`
	Config       json.RawMessage `json:"config"`
	Tools        json.RawMessage `json:"tools"`
	PhoneNumbers *[]string       `json:"phoneNumbers"`
	Specialty    *string         `json:"specialty"`
	DisplayRole  *string         `json:"displayRole"`
	Knowledge    json.RawMessage `json:"knowledge"`
	Fallback     *string         `json:"fallback"`
}

// apply copies the present fields of in onto a.
func (in Input) apply(a *agentstore.Agent) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.Name, in.Name)
	set(&a.Type, in.Type)
	set(&a.Status, in.Status)
	set(&a.Model, in.Model)
	set(&a.Instructions, in.Instructions)
	set(&a.Specialty, in.Specialty)
	set(&a.DisplayRole, in.DisplayRole)
	if present(in.Config) {
		a.Config = in.Config
	}
	if present(in.Tools) {
		a.Tools = in.Tools
	}
	if in.PhoneNumbers != nil {
		a.PhoneNumbers = *in.PhoneNumbers
	}
	if present(in.Knowledge) {
		a.Knowledge = in.Knowledge
	}
	if in.Fallback != nil {
		a.Fallback = in.Fallback
	}
}

// present reports whether a raw JSON field was given (and not null).
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// validate checks a whole agent (a new one, or a stored one with an update
// applied) and normalizes it in place: trimmed name, canonical config and
// tools JSON, cleaned phone numbers. The first problem is an Invalid error
// naming the field.
func validate(a *agentstore.Agent) error {
	a.Name = strings.TrimSpace(a.Name)
	switch {
	case a.Name == "":
		return invalidf("name", "required (1 to 200 characters)")
	case utf8.RuneCountInString(a.Name) > maxName:
		return invalidf("name", "at most %d characters", maxName)
	case a.Type == "":
		return invalidf("type", "required (voice or chat)")
	case !slices.Contains(agentTypes, a.Type):
		return invalidf("type", "must be voice or chat, got %q", a.Type)
	case !slices.Contains(agentStatuses, a.Status):
		return invalidf("status", "must be one of active, inactive, training, deployed, got %q", a.Status)
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{{"model", a.Model, maxModel}, {"instructions", a.Instructions, maxInstructions},
		{"specialty", a.Specialty, maxLabel}, {"displayRole", a.DisplayRole, maxLabel}} {
		if utf8.RuneCountInString(f.v) > f.max {
			return invalidf(f.name, "at most %d characters", f.max)
		}
	}
	cfg, err := validateConfig(a.Type, a.Config)
	if err != nil {
		return err
	}
	a.Config = cfg
	tools, err := validateTools(a.Tools)
	if err != nil {
		return err
	}
	a.Tools = tools
	phones, err := validatePhones(a.Type, a.PhoneNumbers)
	if err != nil {
		return err
	}
	a.PhoneNumbers = phones
	if a.Knowledge, err = validateKnowledge(a.Knowledge); err != nil {
		return err
	}
	return validateFallback(a.Fallback)
}

// validateConfig checks the config object of an agent type and returns it
// re-encoded with only known keys. Unknown keys are refused rather than
// dropped, so a voice setting sent to a chat agent is never lost silently.
func validateConfig(typ string, raw json.RawMessage) (json.RawMessage, error) {
	if !present(raw) {
		return json.RawMessage("{}"), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalidf("config", "must be an object")
	}
	out := map[string]any{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := configValue(typ, k, m[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return json.Marshal(out)
}

// configValue validates one config key of the agent type.
func configValue(typ, key string, raw json.RawMessage) (any, error) {
	field := "config." + key
	switch typ + "." + key {
	case "voice.voice":
		return configString(field, raw, 1, 100)
	case "voice.speed":
		return configNumber(field, raw, 0.25, 4)
	case "voice.interruptionThreshold":
		return configNumber(field, raw, 0, 1)
	case "voice.maxConcurrentCalls":
		// The agent's own cap on calls dialled or talked on at once,
		// besides the server's; the dial queue enforces it at claim time.
		n, err := configNumber(field, raw, 1, maxAgentConcurrency)
		if err != nil || n != float64(int(n)) {
			return nil, invalidf(field, "must be an integer from 1 to %d", maxAgentConcurrency)
		}
		return int(n), nil
	case "voice.firstMessage", "voice.endCallMessage":
		// What the agent says on answering (none: it waits for the
		// caller) and before it ends a silent or overlong call (app/voice).
		return configString(field, raw, 0, 1000)
	case "voice.endpointingMs":
		// Silence after speech that ends the caller's turn.
		n, err := configNumber(field, raw, 100, 5000)
		if err != nil || n != float64(int(n)) {
			return nil, invalidf(field, "must be an integer from 100 to 5000")
		}
		return int(n), nil
	case "voice.silenceTimeoutSeconds":
		// No speech from the caller for this long ends the call.
		n, err := configNumber(field, raw, 5, 3600)
		if err != nil || n != float64(int(n)) {
			return nil, invalidf(field, "must be an integer from 5 to 3600")
		}
		return int(n), nil
	case "voice.recording":
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, invalidf(field, "must be true or false")
		}
		return b, nil
	case "voice.callerIdRotation":
		// Rotate the agent's numbers as caller ID, preferring local ones.
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, invalidf(field, "must be true or false")
		}
		return b, nil
	case "voice.transferDestinations":
		// Where the transfer_call tool may hand a call (app/voice).
		return configTransfers(field, raw)
	case "voice.voicemail":
		// What an outbound call answered by a machine does (app/voice/amd):
		// its presence turns answering-machine detection on.
		return configVoicemail(field, raw)
	case "chat.voiceEnabled":
		// The widget's microphone and the dashboard's Talk control for a
		// chat agent (voice agents always have them).
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, invalidf(field, "must be true or false")
		}
		return b, nil
	case "chat.maxVoiceMinutesPerDay":
		// The widget's daily cap of voice minutes (app/webcall).
		n, err := configNumber(field, raw, 1, 100000)
		if err != nil || n != float64(int(n)) {
			return nil, invalidf(field, "must be an integer from 1 to 100000")
		}
		return int(n), nil
	case "chat.voice", "chat.speed", "chat.interruptionThreshold", "chat.firstMessage", "chat.endCallMessage",
		"chat.endpointingMs", "chat.silenceTimeoutSeconds", "chat.recording":
		// How a chat agent with voiceEnabled speaks: as a voice agent.
		v, err := configValue("voice", key, raw)
		return v, err
	case "chat.theme":
		return configString(field, raw, 1, 50)
	case "chat.primaryColor":
		s, err := configString(field, raw, 7, 7)
		if err != nil || !hexColorRE.MatchString(s) {
			return nil, invalidf(field, "must be a color #RRGGBB")
		}
		return s, nil
	case "chat.position":
		s, err := configString(field, raw, 1, 20)
		if err != nil || !slices.Contains(chatPositions, s) {
			return nil, invalidf(field, "must be one of bottom-right, bottom-left, top-right, top-left")
		}
		return s, nil
	case "chat.greeting":
		return configString(field, raw, 0, 1000)
	case "chat.placeholder":
		return configString(field, raw, 0, 200)
	case "chat.title":
		// The widget header's text; the agent's name when unset.
		return configString(field, raw, 0, 100)
	case "chat.allowedDomains":
		return configDomains(field, raw)
	case "chat.maxMessagesPerDay":
		// The widget's daily cap of visitor messages (app/widget).
		n, err := configNumber(field, raw, 1, 1e7)
		if err != nil || n != float64(int(n)) {
			return nil, invalidf(field, "must be an integer from 1 to 10000000")
		}
		return int(n), nil
	}
	allowed := "voice, speed, interruptionThreshold, maxConcurrentCalls, callerIdRotation, firstMessage, endCallMessage, " +
		"endpointingMs, silenceTimeoutSeconds, recording, voicemail, transferDestinations"
	if typ == "chat" {
		allowed = "theme, primaryColor, position, greeting, placeholder, title, allowedDomains, maxMessagesPerDay, voiceEnabled, " +
			"maxVoiceMinutesPerDay, voice, speed, interruptionThreshold, firstMessage, endCallMessage, endpointingMs, " +
			"silenceTimeoutSeconds, recording"
	}
	return nil, invalidf(field, "not a setting of a %s agent (allowed: %s)", typ, allowed)
}

func configString(field string, raw json.RawMessage, minLen, maxLen int) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidf(field, "must be a string")
	}
	if n := utf8.RuneCountInString(s); n < minLen || n > maxLen {
		if minLen == 0 {
			return "", invalidf(field, "at most %d characters", maxLen)
		}
		return "", invalidf(field, "%d to %d characters", minLen, maxLen)
	}
	return s, nil
}

func configNumber(field string, raw json.RawMessage, lo, hi float64) (float64, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f < lo || f > hi {
		return 0, invalidf(field, "must be a number from %g to %g", lo, hi)
	}
	return f, nil
}

// configDomains checks allowedDomains: sites (ParseSite), lower-cased:
// a host name, optionally "*." for its subdomains, a scheme and a port.
func configDomains(field string, raw json.RawMessage) ([]string, error) {
	var ds []string
	if err := json.Unmarshal(raw, &ds); err != nil {
		return nil, invalidf(field, "must be an array of strings")
	}
	if len(ds) > maxAllowedDomains {
		return nil, invalidf(field, "at most %d domains", maxAllowedDomains)
	}
	out := make([]string, 0, len(ds))
	for i, d := range ds {
		d = strings.ToLower(strings.TrimSpace(d))
		if _, ok := ParseSite(d); !ok {
			return nil, invalidf(field+"."+itoa(i), "%q is not a site (example.com, *.example.com, https://example.com or http://localhost:8080)", ds[i])
		}
		out = append(out, d)
	}
	return out, nil
}

func validDomain(d string) bool {
	d = strings.TrimPrefix(d, "*.")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, l := range strings.Split(d, ".") {
		if !domainLabelRE.MatchString(l) {
			return false
		}
	}
	return true
}
