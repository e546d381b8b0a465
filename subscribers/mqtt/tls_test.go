package mqtt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// pki is a throw-away certificate authority with a server and a client
// certificate, written as PEM files.
type pki struct {
	dir                            string
	caPool                         *x509.CertPool
	server                         tls.Certificate
	caFile, certFile, keyFile, bad string
}

func newPKI(t *testing.T) *pki {
	p := &pki{dir: t.TempDir(), caPool: x509.NewCertPool()}
	caKey, caCert, caDER := newCert(t, "robotexec test CA", nil, nil, true)
	p.caPool.AddCert(caCert)
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", caDER)

	srvKey, _, srvDER := newCert(t, "127.0.0.1", caCert, caKey, false)
	p.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}

	cliKey, _, cliDER := newCert(t, "robot-1", caCert, caKey, false)
	p.certFile = p.write(t, "client.pem", "CERTIFICATE", cliDER)
	der, err := x509.MarshalECPrivateKey(cliKey)
	require.NoError(t, err)
	p.keyFile = p.write(t, "client.key", "EC PRIVATE KEY", der)

	_, _, otherDER := newCert(t, "another CA", nil, nil, true)
	p.bad = p.write(t, "other-ca.pem", "CERTIFICATE", otherDER)
	return p
}

func (p *pki) write(t *testing.T, name, kind string, der []byte) string {
	path := filepath.Join(p.dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

func newCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.IPAddresses = nil
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return key, cert, der
}

// The client speaks TLS with a CA file and a client certificate to a
// broker that requires one; with the wrong CA it says why it cannot
// connect.
func TestTLS(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	b := mqtttest.Embedded(t, broker.Config{TLS: &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.caPool,
		MinVersion:   tls.VersionTLS12,
	}})
	url := b.Broker().URL()
	require.Equal(t, "ssl://"+b.Addr(), url)

	c := dial(t, url, mqtt.Config{QoS: 1, TLS: mqtt.TLSFiles{CA: p.caFile, Cert: p.certFile, Key: p.keyFile}})
	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "secure/#", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)
	pub, err := c.Publisher("secure/x", 1, false)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.PublishWait(ctx, pub.Message([]byte("over tls"))))
	require.Equal(t, "over tls", string(rec.waitCount(t, 1)[0].Payload))

	for _, tc := range []struct {
		name  string
		files mqtt.TLSFiles
		want  string
	}{
		{"wrong CA", mqtt.TLSFiles{CA: p.bad, Cert: p.certFile, Key: p.keyFile}, "certificate"},
		{"no client certificate", mqtt.TLSFiles{CA: p.caFile}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialNoWait(t, url, mqtt.Config{TLS: tc.files})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			err := c.WaitConnected(ctx)
			require.Error(t, err)
			require.ErrorContains(t, err, url)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
