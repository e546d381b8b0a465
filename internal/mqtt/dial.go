package mqtt

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	paho3 "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/net/proxy"
)

// dial opens a network connection to the broker ep: TCP, TLS or WebSocket,
// through the proxy that the environment names (ALL_PROXY, NO_PROXY), within
// the connect timeout.
func (c *Client) dial(ctx context.Context, ep *endpoint) (net.Conn, error) {
	s := c.cfg
	ctx, cancel := context.WithTimeout(ctx, s.ConnectTimeout)
	defer cancel()
	d := &net.Dialer{Timeout: s.ConnectTimeout}
	u := ep.url
	switch u.Scheme {
	case "tcp", "mqtt":
		return dialContext(ctx, d, u.Host)
	case "ssl", "tls", "mqtts", "tcps":
		return dialTLS(ctx, d, u.Host, s.tls)
	case "ws", "wss":
		ws := *u
		ws.User = nil
		var tc *tls.Config
		if u.Scheme == "wss" {
			tc = s.tls
		}
		return paho3.NewWebsocket(ws.String(), tc, s.ConnectTimeout, nil, nil)
	}
	return nil, fmt.Errorf("mqtt: unknown scheme %q", u.Scheme)
}

// dialContext dials host through the environment's proxy.
func dialContext(ctx context.Context, d *net.Dialer, host string) (net.Conn, error) {
	pd := proxy.FromEnvironmentUsing(d)
	if cd, ok := pd.(proxy.ContextDialer); ok {
		return cd.DialContext(ctx, "tcp", host)
	}
	return pd.Dial("tcp", host)
}

// dialTLS opens a TLS connection to host, checking the certificate
// against the host's name unless cfg names another.
func dialTLS(ctx context.Context, d *net.Dialer, host string, cfg *tls.Config) (net.Conn, error) {
	c, err := dialContext(ctx, d, host)
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
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return tc, nil
}
