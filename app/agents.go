package app

// agentRoutes registers the v1 agent and v2 worker/job routes.
func (s *Server) agentRoutes() {}
