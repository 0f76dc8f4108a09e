package bot

import (
	"net/http"

	"github.com/shardgate/shardgate/bot/server/listener"
)

// AdminHandler is the admin listener's surface: /metrics, /healthz and
// GET /admin/backup.
func (s *Server) AdminHandler() http.Handler {
	return listener.AdminHandler(s.registry, s.store, s.cfg.Admin.Token, s.log)
}

// startAdmin serves the admin listener when admin.listen is set, until stop.
func (s *Server) startAdmin() (stop func(), err error) {
	if !s.cfg.Admin.Enabled() {
		return func() {}, nil
	}
	addr, stop, err := listener.StartAdmin(s.cfg.Admin.Listen, s.AdminHandler(), s.log)
	if err != nil {
		return nil, err
	}
	s.adminAddr = addr
	return stop, nil
}
