package broker_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// Limits out of range are errors that name the setting; the extremes of
// the ranges are valid.
func TestNewLimits(t *testing.T) {
	for _, tc := range []struct {
		cfg  broker.Config
		want string // error; "" for none
	}{
		{broker.Config{MaxQueued: -1}, "MaxQueued -1 is not within 1..65535"},
		{broker.Config{MaxQueued: 65536}, "MaxQueued 65536"},
		{broker.Config{MaxQueued: 1}, ""},
		{broker.Config{MaxQueued: 65535}, ""},
		{broker.Config{MaxPacketSize: -1}, "MaxPacketSize -1 is not within 1..268435460"},
		{broker.Config{MaxPacketSize: 268435461}, "MaxPacketSize 268435461"},
		{broker.Config{MaxPacketSize: 1}, ""},
		{broker.Config{MaxPacketSize: 268435460}, ""},
		{broker.Config{MaxConnections: -1}, "MaxConnections -1 is not within 1..2147483647"},
		{broker.Config{MaxConnections: 1}, ""},
		{broker.Config{MaxQueued: -1, MaxConnections: -1}, "MaxQueued -1 is not within 1..65535\nbroker: MaxConnections -1"},
		{broker.Config{Listen: "127.0.0.1:not-a-port"}, "broker: listen on 127.0.0.1:not-a-port"},
	} {
		if tc.cfg.Listen == "" {
			tc.cfg.Listen = "127.0.0.1:0"
		}
		tc.cfg.Logger = quiet
		b, err := broker.New(tc.cfg)
		if tc.want == "" {
			require.NoError(t, err, "%+v", tc.cfg)
			require.NoError(t, b.Close())
			continue
		}
		require.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
		require.Nil(t, b)
	}
}

// The zero Config listens on 127.0.0.1:1883, or, when something else
// holds that port, says that it cannot listen on exactly that address:
// either way the default is checked.
func TestDefaultListen(t *testing.T) {
	b, err := broker.New(broker.Config{})
	if err != nil {
		require.ErrorContains(t, err, "listen on "+broker.DefaultListen)
		require.ErrorIs(t, err, syscall.EADDRINUSE)
		t.Logf("%s is in use, the error names it: %v", broker.DefaultListen, err)
		return
	}
	defer b.Close()
	require.Equal(t, broker.DefaultListen, b.Addr())
	require.Equal(t, "tcp://"+broker.DefaultListen, b.URL())
}

// selfSigned returns a certificate for 127.0.0.1 and a pool that trusts
// it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "broker"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// With TLS the broker speaks MQTT over TLS at an ssl:// URL, to clients
// that trust its certificate, and checks users as over TCP; a connection
// that never completes its handshake does not hold Close up.
func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet,
		TLS:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Users: map[string]broker.User{"alice": {Password: "pw", Read: []string{"#"}, Write: []string{"#"}}}})
	require.NoError(t, err)
	require.Equal(t, "ssl://"+b.Addr(), b.URL())
	connect := func(url, user, password string, roots *x509.CertPool) (paho.Client, error) {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("c-" + user + password).
			SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(5 * time.Second).
			SetUsername(user).SetPassword(password).SetTLSConfig(&tls.Config{RootCAs: roots}))
		tok := c.Connect()
		require.True(t, tok.WaitTimeout(10*time.Second))
		return c, tok.Error()
	}
	alice, err := connect(b.URL(), "alice", "pw", pool)
	require.NoError(t, err)
	defer alice.Disconnect(0)
	in := make(inbox, 1)
	wait(t, alice.Subscribe("a/#", 1, in.handle))
	wait(t, alice.Publish("a/b", 1, false, "over TLS"))
	require.Equal(t, "over TLS", string(in.next(t).Payload()))

	_, err = connect(b.URL(), "alice", "wrong", pool)
	require.ErrorContains(t, err, "not Authorized")
	_, err = connect(b.URL(), "alice", "pw", x509.NewCertPool())
	require.ErrorContains(t, err, "certificate")
	_, err = connect("tcp://"+b.Addr(), "alice", "pw", nil)
	require.Error(t, err, "plain MQTT to a TLS listener")

	silent, err := net.DialTimeout("tcp", b.Addr(), 10*time.Second)
	require.NoError(t, err)
	defer silent.Close()
	start := time.Now()
	require.NoError(t, b.Close())
	require.Less(t, time.Since(start), time.Second)
	require.Eventually(t, func() bool { return !alice.IsConnectionOpen() }, 10*time.Second, time.Millisecond)
}

// A client that sends a packet larger than MaxPacketSize is disconnected
// and counted, and its message goes nowhere; smaller packets pass.
func TestMaxPacketSize(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, MaxPacketSize: 1024})
	require.NoError(t, err)
	defer b.Close()
	lost := make(chan struct{})
	big := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("big").SetAutoReconnect(false).
		SetConnectionLostHandler(func(paho.Client, error) { close(lost) }))
	wait(t, big.Connect())
	defer big.Disconnect(0)
	sub, err := pahoClient(t, b, "sub", "", "")
	require.NoError(t, err)
	in := make(inbox, 4)
	wait(t, sub.Subscribe("p/#", 1, in.handle))

	wait(t, big.Publish("p/small", 1, false, strings.Repeat("x", 900)))
	require.Equal(t, "p/small", in.next(t).Topic())
	big.Publish("p/large", 1, false, strings.Repeat("x", 1100))
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("still connected after a packet beyond MaxPacketSize")
	}
	require.Eventually(t, func() bool { return b.Stats().PacketsTooLarge == 1 }, 10*time.Second, time.Millisecond)
	wait(t, sub.Publish("p/after", 1, false, "x"))
	require.Equal(t, "p/after", in.next(t).Topic(), "the large message went through")
}

// mochi's warning about a short keepalive, routine for robotexec's
// clients, is logged at Debug.
func TestShortKeepaliveLoggedAtDebug(t *testing.T) {
	var logs syncBuffer
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	defer b.Close()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("short").SetKeepAlive(2 * time.Second))
	wait(t, c.Connect()) // the broker logs it before its CONNACK
	defer c.Disconnect(0)
	require.Contains(t, logs.String(), `level=DEBUG msg="broker: client keepalive is below minimum recommended value`)
	require.NotContains(t, logs.String(), "level=WARN")
}

// Close returns, in bounded time, even when a client stopped reading and
// the broker is stuck writing to it: it closes that connection itself.
func TestCloseWithClientNotReading(t *testing.T) {
	t.Parallel()
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	stuck := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "stuck", Keepalive: 60, Clean: true}})
	stuck.subscribe("big/#")
	require.NoError(t, stuck.conn.(*net.TCPConn).SetReadBuffer(4096))
	pub, err := pahoClient(t, b, "pub", "", "")
	require.NoError(t, err)
	// Far more than the sockets' buffers hold.
	payload := strings.Repeat("x", 1<<20)
	for range 32 {
		pub.Publish("big/x", 0, false, payload)
	}
	// Handled in order: once this is acknowledged, the broker queued
	// the others for stuck.
	wait(t, pub.Publish("sync", 1, false, "x"))

	done := make(chan error, 1)
	go func() { done <- b.Close() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}
