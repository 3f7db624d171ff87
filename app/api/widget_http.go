package api

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	widgetapi "github.com/agentd/agentd/app/api/widget"
	"github.com/agentd/agentd/app/widget"
)

// newWidgetAPI builds the chat widget's public handlers (app/api/widget).
func (s *Server) newWidgetAPI(w *widget.Service) *widgetapi.Handlers {
	return widgetapi.New(widgetapi.Deps{Widget: w, Log: s.log})
}

// widgetScript serves /widget.js (outside the API middleware and the
// OpenAPI document: it is a static file).
func widgetScript(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	widgetapi.ServeScript(w, r)
}

// widgetAudio serves /widget-audio.js, the voice sessions' AudioWorklet.
func widgetAudio(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	widgetapi.ServeAudio(w, r)
}
