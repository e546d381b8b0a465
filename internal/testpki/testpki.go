// Package testpki makes throw-away certificate authorities for tests of
// TLS: a CA with a server and a client certificate, written as PEM files,
// and files that are wrong in the ways users get them wrong.
package testpki

import (
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
)

// PKI is a certificate authority with a server certificate for 127.0.0.1
// and a client certificate, and the PEM files of a test.
type PKI struct {
	// CAPool holds the CA, for a server that verifies clients.
	CAPool *x509.CertPool
	// Server is the server's certificate and key, for tls.Config.
	Server tls.Certificate
	// CAFile, CertFile and KeyFile are the CA's certificate and the
	// client's certificate and key.
	CAFile, CertFile, KeyFile string
	// OtherCA is the certificate of another CA, which signed nothing here.
	OtherCA string
	// Leaf is a certificate that is not a CA's (the client's, again).
	Leaf string
	// OtherKey is a key that does not match CertFile.
	OtherKey string
	// NotPEM is a file of text that holds no PEM block.
	NotPEM string
}

// New makes a PKI whose files are in a temporary directory of t.
func New(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	p := &PKI{CAPool: x509.NewCertPool()}
	caKey, caCert, caDER := newCert(t, "robotexec test CA", nil, nil)
	p.CAPool.AddCert(caCert)
	p.CAFile = write(t, dir, "ca.pem", "CERTIFICATE", caDER)

	srvKey, _, srvDER := newCert(t, "127.0.0.1", caCert, caKey)
	p.Server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}

	cliKey, _, cliDER := newCert(t, "robot-1", caCert, caKey)
	p.CertFile = write(t, dir, "client.pem", "CERTIFICATE", cliDER)
	p.KeyFile = write(t, dir, "client.key", "EC PRIVATE KEY", marshalKey(t, cliKey))
	p.Leaf = p.CertFile

	_, _, otherDER := newCert(t, "another CA", nil, nil)
	p.OtherCA = write(t, dir, "other-ca.pem", "CERTIFICATE", otherDER)
	otherKey, _, _ := newCert(t, "robot-2", caCert, caKey)
	p.OtherKey = write(t, dir, "other.key", "EC PRIVATE KEY", marshalKey(t, otherKey))
	p.NotPEM = filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(p.NotPEM, []byte("this is not a certificate\n"), 0o600))
	return p
}

func marshalKey(t testing.TB, k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	return der
}

func write(t testing.TB, dir, name, kind string, der []byte) string {
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

// newCert makes a key and a certificate for cn signed by parent, or a
// self-signed CA's when parent is nil.
func newCert(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
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
	if parent == nil {
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
