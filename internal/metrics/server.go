package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is what /healthz reports.
type Health struct {
	// Executor is "starting", "running", "stopping" or "stopped".
	Executor string `json:"executor"`
	// MQTT is "connected" or "disconnected".
	MQTT string `json:"mqtt"`
}

// Healthy reports whether the executor runs and MQTT is connected.
func (h Health) Healthy() bool { return h.Executor == "running" && h.MQTT == "connected" }

// NewRegistry returns a registry with c and the Go runtime's and the
// process's standard collectors.
func NewRegistry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler returns the HTTP handler of /metrics (reg's metrics), /healthz
// (health's answer: 200 when it is healthy, else 503, with its JSON) and
// /debug/pprof/ (net/http/pprof). Errors of a scrape go to logger.
func Handler(reg *prometheus.Registry, health func() Health, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		h := health()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !h.Healthy() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// Server is an HTTP server on a TCP address bound by Listen: it binds
// first, so that a bad address fails a program before it starts anything
// else, and serves once the handler's sources exist.
type Server struct {
	ln        net.Listener
	srv       *http.Server
	serveOnce sync.Once
	done      chan struct{} // closed when Serve's goroutine returned
	err       error         // Serve's error, other than ErrServerClosed
}

// Listen binds addr (host:port, exactly as given: "127.0.0.1:9090" is
// loopback only, ":9090" every interface). Connections wait until Serve.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	return &Server{
		ln:   ln,
		srv:  &http.Server{ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}, nil
}

// Addr returns the address the server listens on (with the port chosen,
// for a port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves h on the server's address, on a goroutine the server owns,
// until Shutdown. Only the first call has an effect.
func (s *Server) Serve(h http.Handler) {
	s.serveOnce.Do(func() {
		s.srv.Handler = h
		go func() {
			defer close(s.done)
			if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
				s.err = err
			}
		}()
	})
}

// Shutdown stops the server: it stops listening, lets requests in
// progress finish until ctx ends, then closes their connections. It
// returns Serve's error, if it failed, or ctx's, if requests were cut
// short. A server that never served just closes its listener.
func (s *Server) Shutdown(ctx context.Context) error {
	s.serveOnce.Do(func() {
		// Never served: there is only the listener to close.
		s.err = s.ln.Close()
		close(s.done)
	})
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return errors.Join(s.err, err)
}
