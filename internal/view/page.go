package view

import (
	"embed"
	"io/fs"
	"net/http"
)

// pageFiles are robotexec's own page, served at / of the listener: plain
// HTML, CSS and JavaScript that speak the protocol to the server that
// serves them, with nothing fetched from elsewhere.
//
//go:embed page
var pageFiles embed.FS

// pageHandler serves the page's files.
var pageHandler = func() http.Handler {
	sub, err := fs.Sub(pageFiles, "page")
	if err != nil {
		panic("view: " + err.Error()) // the embedded tree has the folder
	}
	return http.FileServerFS(sub)
}()

// SetStats serves h at /stats.json of the listener, where the page reads
// each callback's runs, latency and drops; before, or with a nil h,
// /stats.json answers 404 and the page shows no callbacks.
func (s *Server) SetStats(h http.Handler) {
	s.stats.Store(&h)
}

// servePage answers a request that is not a WebSocket upgrade: the page,
// or the stats.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	if r.URL.Path == "/stats.json" {
		if h := s.stats.Load(); h != nil && *h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "no stats: this process has no callbacks", http.StatusNotFound)
		return
	}
	pageHandler.ServeHTTP(w, r)
}
