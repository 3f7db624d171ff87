package web

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentd/agentd/app/agents"
)

// widgetData is what a chat agent's page shows of the widget: the snippet
// to paste, whether any site may use it, and the preview's settings.
type widgetData struct {
	Origin    string
	Snippet   string
	NoDomains bool
	Domains   []string
	Settings  string // JSON for the preview's data-settings
}

func (s *Site) widgetData(r *http.Request, a agents.Agent) *widgetData {
	origin := s.cfg.PublicURL
	if origin == "" {
		scheme := "http"
		if r.TLS != nil || s.cfg.SecureCookie {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
	}
	var c struct {
		Theme, PrimaryColor, Position, Greeting, Placeholder, Title string
		AllowedDomains                                              []string
	}
	json.Unmarshal(a.Config, &c)
	if c.Title == "" {
		c.Title = a.Name // as the widget shows it
	}
	settings, _ := json.Marshal(map[string]string{"theme": c.Theme, "primaryColor": c.PrimaryColor,
		"position": c.Position, "greeting": c.Greeting, "placeholder": c.Placeholder, "title": c.Title})
	return &widgetData{Origin: origin, NoDomains: len(c.AllowedDomains) == 0, Domains: c.AllowedDomains, Settings: string(settings),
		Snippet: fmt.Sprintf(`<script src="%s/widget.js" data-agent="%s" async></script>`, origin, a.ID)}
}
