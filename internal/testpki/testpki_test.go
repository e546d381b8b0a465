package testpki_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/testpki"
)

// certOf reads the first certificate of the PEM file at path.
func certOf(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	block, _ := pem.Decode(b)
	require.NotNil(t, block, "%s holds a PEM block", path)
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}

// TestNew: the server's and the client's certificates verify against the
// CA, as a server for 127.0.0.1 and a client; the client's files make a
// key pair; the wrong files are wrong in the ways they are named for.
func TestNew(t *testing.T) {
	p := testpki.New(t)
	srv, err := x509.ParseCertificate(p.Server.Certificate[0])
	require.NoError(t, err)
	_, err = srv.Verify(x509.VerifyOptions{Roots: p.CAPool, DNSName: "127.0.0.1"})
	require.NoError(t, err, "the server's certificate")

	_, err = tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	require.NoError(t, err, "the client's key pair")
	cli := certOf(t, p.CertFile)
	_, err = cli.Verify(x509.VerifyOptions{Roots: p.CAPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err, "the client's certificate")
	require.True(t, certOf(t, p.CAFile).IsCA)

	other := x509.NewCertPool()
	other.AddCert(certOf(t, p.OtherCA))
	_, err = cli.Verify(x509.VerifyOptions{Roots: other, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.Error(t, err, "the other CA signed nothing here")
	require.False(t, certOf(t, p.Leaf).IsCA)
	_, err = tls.LoadX509KeyPair(p.CertFile, p.OtherKey)
	require.Error(t, err, "the other key does not match")
	b, err := os.ReadFile(p.NotPEM)
	require.NoError(t, err)
	block, _ := pem.Decode(b)
	require.Nil(t, block)
}
