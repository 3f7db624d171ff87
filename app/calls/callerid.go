package calls

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage/agentstore"
)

// Caller ID from the agent's pool: a voice agent with several numbers and
// config.callerIdRotation true rotates them per call, preferring numbers
// with the recipient's country and area code ("local presence"), then its
// country, then any. Without rotation the caller ID is the agent's first
// number (DECISIONS.md); a callerId in the request always wins.

// callerPool picks caller IDs; it keeps a rotation counter per agent.
type callerPool struct {
	turns sync.Map // agent id -> *atomic.Uint64
	areas sync.Map // agent number -> area
}

type area struct{ country, code string }

func (p *callerPool) areaOf(number string) area {
	if a, ok := p.areas.Load(number); ok {
		return a.(area)
	}
	c, code, _ := dial.NumberArea(number)
	a := area{c, code}
	p.areas.Store(number, a) // agents' numbers: a small set
	return a
}

// rotates reports whether the agent's config asks for rotation.
func rotates(a agentstore.Agent) bool {
	var cfg struct {
		CallerIDRotation bool `json:"callerIdRotation"`
	}
	_ = json.Unmarshal(a.Config, &cfg)
	return cfg.CallerIDRotation && len(a.PhoneNumbers) > 1
}

// pick is the caller ID for a call from a to phone.
func (p *callerPool) pick(a agentstore.Agent, phone, explicit string) string {
	if explicit != "" {
		return explicit
	}
	if len(a.PhoneNumbers) == 0 {
		return ""
	}
	if !rotates(a) {
		return a.PhoneNumbers[0]
	}
	c, code, _ := dial.NumberArea(phone)
	var local, country []string
	for _, n := range a.PhoneNumbers {
		na := p.areaOf(n)
		if na.country == c {
			country = append(country, n)
			if code != "" && na.code == code {
				local = append(local, n)
			}
		}
	}
	pool := a.PhoneNumbers
	switch {
	case len(local) > 0:
		pool = local
	case len(country) > 0:
		pool = country
	}
	v, _ := p.turns.LoadOrStore(a.ID, new(atomic.Uint64))
	n := v.(*atomic.Uint64).Add(1) - 1
	return pool[n%uint64(len(pool))]
}
