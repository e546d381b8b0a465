package view

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Reasons that a WebSocket upgrade is refused, as Stats counts them.
const (
	// RefusedOrigin: the upgrade came from a web page of a foreign origin.
	RefusedOrigin = "origin"
	// RefusedUnauthorized: the upgrade had no valid credentials.
	RefusedUnauthorized = "unauthorized"
)

// originAllowed reports whether a WebSocket upgrade may come from the web
// page that r's Origin header names, and returns the header. A browser
// always sends the origin of the page that opens a WebSocket, and a page
// cannot change it, so that the server can tell its own page and the
// origins of Options.AllowedOrigins from any other page open in the
// browser, which may not drive the robot. A request without an Origin
// header is not a browser's (the reference client, robotexec's own tools)
// and is let through to the credentials.
func (s *Server) originAllowed(r *http.Request) (string, bool) {
	vals := r.Header.Values("Origin")
	switch {
	case len(vals) == 0:
		return "", true
	case len(vals) > 1:
		return strings.Join(vals, ", "), false
	}
	origin := vals[0]
	if ownOrigin(origin, r.Host) {
		return origin, true
	}
	for _, o := range s.opts.AllowedOrigins {
		if strings.EqualFold(o, origin) {
			return origin, true
		}
	}
	return origin, false
}

// ownOrigin reports whether origin is that of the server's own page: the
// page was loaded from the address that the browser reached the server at
// (host, the request's Host header), given as an IP address or as
// localhost. A name is not taken for the server's own: the page of a name
// that resolved elsewhere when it was loaded and to this server now (DNS
// rebinding) would pass for it. Names go in Options.AllowedOrigins.
func ownOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path != "" || u.RawQuery != "" {
		return false
	}
	if !strings.EqualFold(u.Host, host) {
		return false
	}
	name := u.Hostname()
	return strings.EqualFold(name, "localhost") || net.ParseIP(name) != nil
}

// refused counts a WebSocket upgrade refused for reason and logs it, one
// line per reason per ten seconds at most: a page that retries must not
// flood the log.
func (s *Server) refused(r *http.Request, reason, origin string) {
	switch reason {
	case RefusedOrigin:
		s.refusedOrigin.Add(1)
		s.originLog.Log(s.log, slog.LevelWarn, "refused a viewer: a web page of a foreign origin (list the origin in view.allowed_origins to let its pages in)",
			"origin", origin, "remote", r.RemoteAddr)
	case RefusedUnauthorized:
		s.refusedAuth.Add(1)
		s.authLog.Log(s.log, slog.LevelWarn, "refused a viewer: no valid credentials", "remote", r.RemoteAddr)
	}
}
