package view

import (
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/subscribers"
)

// Defaults of Options.
const (
	// Subprotocol is the WebSocket subprotocol the server speaks.
	Subprotocol = "foxglove.websocket.v1"
	// RawEncoding is the message encoding of channels whose payloads are
	// not JSON: the bytes as published (the encoding of robotexec's MCAP
	// recordings too).
	RawEncoding = "application/octet-stream"
	// JSONEncoding is the message encoding of channels of JSON payloads.
	JSONEncoding = "json"
	// DefaultQueue is the default of Options.Queue.
	DefaultQueue = 1024
	// DefaultQueueBytes is the default of Options.QueueBytes.
	DefaultQueueBytes = 8 << 20
	// DefaultMaxChannels is the default of Options.MaxChannels.
	DefaultMaxChannels = 10000
)

// User is a viewer who may connect: its credentials and the topic filters
// of what it may read and write.
type User struct {
	Username, Password string
	Read, Write        []string
}

// Options configure a Server.
type Options struct {
	// Listen is the host:port to listen on. Required.
	Listen string
	// Name is the server's name in its Server Info message. (optional)
	// Defaults to "robotexec".
	Name string
	// Users are who may connect. (optional) Defaults to none.
	Users []User
	// Anonymous lets viewers without credentials in, to see every topic.
	// (optional) Defaults to false.
	Anonymous bool
	// AnonymousPublish lets anonymous viewers publish on every topic too.
	// (optional) Defaults to false: only users publish, on the topics of
	// their Write filters.
	AnonymousPublish bool
	// AllowedOrigins are the web origins, as browsers send them in the
	// Origin header (scheme://host[:port], such as
	// https://app.foxglove.dev), whose pages may connect besides the
	// server's own page; a WebSocket upgrade from any other page is
	// refused with 403, and counted. A client that sends no Origin is not
	// a browser and is not refused for it. (optional) Defaults to none.
	AllowedOrigins []string
	// Publish, when set, gives viewers the clientPublish capability: it
	// is called with each message a viewer publishes, from that viewer's
	// reader goroutine. (optional) Defaults to nil: viewers only watch.
	Publish func(topic string, payload []byte) error
	// Echoed says that the server is shown the viewers' publications
	// again by whoever observes (robotexec view gets them back from the
	// broker it subscribes to), so that it does not observe them itself.
	// (optional) Defaults to false: each publication is observed once
	// Publish returns.
	Echoed bool
	// ConnectionGraph gives viewers the connectionGraph capability: they
	// may subscribe to the graph that SetGraph sets. (optional) Defaults
	// to false.
	ConnectionGraph bool
	// Time gives viewers the time capability: the server sends them the
	// time that SetTime sets, as it changes, and the time a viewer
	// connects at. The messages' stamps are what Observe is given: the
	// caller stamps them with the same clock. (optional) Defaults to
	// false: the messages' receive times are the wall clock's.
	Time bool
	// Parameters, when not nil, give viewers the parameters capability,
	// read-only: getParameters answers with them, setParameters is
	// refused. (optional) Defaults to nil: no parameters.
	Parameters []Parameter
	// MaxPayload bounds the messages a viewer sends. (optional) Defaults
	// to 1 MiB.
	MaxPayload int
	// Queue and QueueBytes bound each connection's send queue, in
	// messages and in payload bytes. (optional) Default to DefaultQueue
	// and DefaultQueueBytes.
	Queue, QueueBytes int
	// MaxChannels bounds the channels advertised: past it, the channels of
	// the least recently seen topic are unadvertised to make room.
	// (optional) Defaults to DefaultMaxChannels.
	MaxChannels int
	// Logger logs connections and their errors. (optional) Defaults to
	// none.
	Logger *slog.Logger
}

// Server is a live view server; make one with Listen.
type Server struct {
	opts     Options
	log      *slog.Logger
	ln       net.Listener
	http     *http.Server
	upgrader websocket.Upgrader
	session  string
	reg      registry

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	nextID uint64
	graph  graphState
	joined joinedGraph    // the graph's filters joined with the channels
	wg     sync.WaitGroup // the connections' handlers and writers
	served chan struct{}  // closed when Serve has returned

	now           atomic.Int64  // the time of SetTime, in ns; 0 before
	droppedClosed atomic.Uint64 // drops of connections that ended
	stats         atomic.Pointer[http.Handler]

	anonymous                  User          // who a viewer without credentials is
	refusedOrigin, refusedAuth atomic.Uint64 // upgrades refused, by reason
	originLog, authLog         *ratelog.Limiter
}

// Listen binds opts.Listen and serves the live view there until Close.
func Listen(opts Options) (*Server, error) {
	if opts.Name == "" {
		opts.Name = "robotexec"
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = 1 << 20
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.MaxChannels <= 0 {
		opts.MaxChannels = DefaultMaxChannels
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("view: %w", err)
	}
	s := &Server{
		opts:    opts,
		log:     opts.Logger,
		ln:      corkListener{ln},
		session: strconv.FormatInt(time.Now().UnixNano(), 10),
		conns:   map[*conn]struct{}{},
		served:  make(chan struct{}),
		// handle checks the origin before the credentials, so that a
		// foreign page is refused whatever it sends.
		upgrader:  websocket.Upgrader{Subprotocols: []string{Subprotocol}, CheckOrigin: func(*http.Request) bool { return true }},
		anonymous: User{Read: []string{"#"}},
		originLog: ratelog.New(10 * time.Second),
		authLog:   ratelog.New(10 * time.Second),
	}
	if opts.AnonymousPublish {
		s.anonymous.Write = []string{"#"}
	}
	s.reg.init(opts.MaxChannels, s.wakeAll)
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.handle)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(s.ln) // ErrServerClosed at Close
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server now: it stops listening, closes every
// connection and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.http.Close()
	for _, c := range conns {
		c.close()
	}
	s.wg.Wait()
	<-s.served
	return err
}

// handle serves a request: a WebSocket upgrade of the Foxglove protocol
// becomes a connection, if its origin is allowed; anything else is for
// the page. Both need the same credentials, so that a browser that was
// asked for them on the page sends them again on the page's upgrade.
// Only upgrades are checked for their origin: a browser does not let a
// foreign page read the answers to its other requests (CORS), but it
// lets any page open a WebSocket.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	upgrade := websocket.IsWebSocketUpgrade(r)
	if upgrade {
		if origin, ok := s.originAllowed(r); !ok {
			s.refused(r, RefusedOrigin, origin)
			http.Error(w, "forbidden: pages of origin "+origin+" may not connect to this live view", http.StatusForbidden)
			return
		}
	}
	user, ok := s.authenticate(r)
	if !ok {
		if upgrade {
			s.refused(r, RefusedUnauthorized, "")
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="robotexec view"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if !upgrade {
		s.servePage(w, r)
		return
	}
	if !slices.Contains(websocket.Subprotocols(r), Subprotocol) {
		http.Error(w, "the WebSocket subprotocol must be "+Subprotocol, http.StatusBadRequest)
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	c := s.add(ws, user)
	if c == nil {
		ws.Close()
		return
	}
	defer s.remove(c)
	s.log.Info("viewer connected", "remote", r.RemoteAddr, "user", user.Username)
	c.serve()
}

// authenticate returns the user that r authenticates as, with HTTP basic
// authentication; without credentials, the anonymous user when allowed.
func (s *Server) authenticate(r *http.Request) (*User, bool) {
	name, pw, ok := r.BasicAuth()
	if !ok {
		if s.opts.Anonymous {
			return &s.anonymous, true
		}
		return nil, false
	}
	for i := range s.opts.Users {
		u := &s.opts.Users[i]
		if u.Username == name && subtle.ConstantTimeCompare([]byte(u.Password), []byte(pw)) == 1 {
			return u, true
		}
	}
	return nil, false
}

// add registers a connection; nil once the server is closed.
func (s *Server) add(ws *websocket.Conn, u *User) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.nextID++
	c := newConn(s, ws, u, s.nextID)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return c
}

// remove forgets a connection that has ended.
func (s *Server) remove(c *conn) {
	s.mu.Lock()
	s.droppedClosed.Add(c.dropped.Load())
	delete(s.conns, c)
	s.mu.Unlock()
	s.log.Info("viewer disconnected", "remote", c.ws.RemoteAddr().String(), "dropped", c.dropped.Load())
	s.wg.Done()
}

// wakeAll tells every connection that there are new channels.
func (s *Server) wakeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.wake()
	}
}

// Observe shows the viewers a message on topic, stamped with at: the
// channels' subscribers get it, unless their queue is full. The first
// message of a topic makes its channel, unless the connection graph
// named it first. It never blocks; payload is not
// kept.
func (s *Server) Observe(topic string, payload []byte, at time.Time) {
	s.reg.observe(topic, payload, uint64(at.UnixNano()))
}

// SetTime sets the server's time, which viewers get with Options.Time:
// each connection sends the latest time set when it is ready to (a viewer
// that is slow to read skips times, never falls behind).
func (s *Server) SetTime(t time.Time) {
	if s.now.Swap(t.UnixNano()) != t.UnixNano() && s.opts.Time {
		s.wakeAll()
	}
}

// publish publishes a viewer's message through Options.Publish and
// observes it, unless Options.Echoed.
func (s *Server) publish(topic string, payload []byte) error {
	if err := s.opts.Publish(topic, payload); err != nil {
		return err
	}
	if !s.opts.Echoed {
		s.Observe(topic, payload, time.Now())
	}
	return nil
}

// Stats are the counts of a Server.
type Stats struct {
	// Connections are the open connections.
	Connections []ConnStats
	// DroppedClosed counts the messages dropped for the connections that
	// have ended.
	DroppedClosed uint64
	// Refused counts the WebSocket upgrades refused, by reason:
	// RefusedOrigin (403) and RefusedUnauthorized (401).
	Refused map[string]uint64
	// Channels counts the channels advertised; Evicted the topics whose
	// channels were removed (unadvertised) to make room for others,
	// beyond Options.MaxChannels, the least recently seen first; Unshown
	// the messages of topics not shown, when there was nothing to evict.
	Channels, Evicted, Unshown uint64
}

// ConnStats are the counts of one connection.
type ConnStats struct {
	// ID numbers the connections from 1, in order.
	ID uint64
	// Remote is the viewer's address; User its username, "" when
	// anonymous.
	Remote, User string
	// Sent counts the messages sent; Dropped those dropped because the
	// connection's send queue was full.
	Sent, Dropped uint64
}

// Stats returns the server's counts.
func (s *Server) Stats() Stats {
	var st Stats
	st.Channels, st.Unshown, st.Evicted = s.reg.counts()
	st.Refused = map[string]uint64{RefusedOrigin: s.refusedOrigin.Load(), RefusedUnauthorized: s.refusedAuth.Load()}
	s.mu.Lock()
	st.DroppedClosed = s.droppedClosed.Load()
	for c := range s.conns {
		st.Connections = append(st.Connections, ConnStats{
			ID: c.id, Remote: c.ws.RemoteAddr().String(), User: c.user.Username,
			Sent: c.sent.Load(), Dropped: c.dropped.Load(),
		})
	}
	s.mu.Unlock()
	slices.SortFunc(st.Connections, func(a, b ConnStats) int { return int(a.ID - b.ID) })
	return st
}

// matches reports whether one of filters matches topic.
func matches(filters []string, topic string) bool {
	for _, f := range filters {
		if subscribers.Match(f, topic) {
			return true
		}
	}
	return false
}
