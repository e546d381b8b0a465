package mqtt

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sync/atomic"

	paho "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/net/proxy"
)

// readBuffer is the size of a connection's read buffer.
const readBuffer = 16 << 10

// openConnection opens the client's TCP and TLS connections with a read
// buffer: paho reads each packet in at least three reads (its type, its
// length, its body), a system call each on a bare connection, which made
// reading a quarter of the client's CPU in a QoS 1 bridge through
// mosquitto. They go through the proxy that the environment names
// (ALL_PROXY, NO_PROXY), as paho's own do. WebSocket connections are
// paho's own.
func openConnection(uri *url.URL, o paho.ClientOptions, g *poisonGuard) (net.Conn, error) {
	d := &net.Dialer{Timeout: o.ConnectTimeout}
	var c net.Conn
	var err error
	switch uri.Scheme {
	case "tcp", "mqtt":
		c, err = proxy.FromEnvironmentUsing(d).Dial("tcp", uri.Host)
	case "ssl", "tls", "mqtts", "tcps":
		c, err = dialTLS(d, uri.Host, o.TLSConfig)
	case "ws", "wss":
		ws := *uri
		ws.User = nil
		var tc *tls.Config
		if uri.Scheme == "wss" {
			tc = o.TLSConfig
		}
		return paho.NewWebsocket(ws.String(), tc, o.ConnectTimeout, o.HTTPHeaders, o.WebsocketOptions)
	default:
		return nil, fmt.Errorf("mqtt: unknown scheme %q", uri.Scheme)
	}
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, readBuffer), guard: g}, nil
}

// dialTLS opens a TLS connection to host through the environment's proxy,
// checking the certificate against the host's name unless cfg names
// another.
func dialTLS(d *net.Dialer, host string, cfg *tls.Config) (net.Conn, error) {
	c, err := proxy.FromEnvironmentUsing(d).Dial("tcp", host)
	if err != nil {
		return nil, err
	}
	cfg = cfg.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		if name, _, err := net.SplitHostPort(host); err == nil {
			cfg.ServerName = name
		}
	}
	ctx := context.Background()
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return tc, nil
}

// bufferedConn is a connection whose reads go through a buffer, and whose
// first read or write error goes to the poison guard.
type bufferedConn struct {
	net.Conn
	r      *bufio.Reader
	guard  *poisonGuard
	read   atomic.Bool // something was read
	failed atomic.Bool
}

func (c *bufferedConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && !c.read.Load() {
		c.read.Store(true) // the broker answered: a connection, not an attempt
	}
	if err != nil {
		c.fail(err)
	}
	return n, err
}

func (c *bufferedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// fail tells the guard of the first error of a connection on which the
// broker had answered; a failed connection attempt is not its business.
func (c *bufferedConn) fail(err error) {
	if c.guard != nil && c.read.Load() && c.failed.CompareAndSwap(false, true) {
		c.guard.connectionError(err)
	}
}
