package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/robotexec/robotexec/internal/smallfile"
)

// TLSFiles names the PEM files of a TLS configuration.
type TLSFiles struct {
	// CA is the file of the certificate authorities that sign the
	// broker's certificate. (optional) Defaults to the system's roots.
	CA string
	// Cert and Key are the client's certificate and private key, for
	// brokers that require client certificates. (optional) Set both or
	// neither.
	Cert string
	Key  string
	// ServerName overrides the name checked in the broker's certificate.
	// (optional) Defaults to the URL's host.
	ServerName string
}

// Empty reports whether no file is named.
func (f TLSFiles) Empty() bool { return f == TLSFiles{} }

// Config returns the tls.Config that the files describe.
func (f TLSFiles) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CA != "" {
		pem, err := smallfile.Read(f.CA)
		if err != nil {
			return nil, fmt.Errorf("mqtt: tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt: tls ca: %s holds no PEM certificate", f.CA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case f.Cert != "" && f.Key != "":
		certPEM, err := smallfile.Read(f.Cert)
		if err != nil {
			return nil, fmt.Errorf("mqtt: tls client certificate: %w", err)
		}
		keyPEM, err := smallfile.Read(f.Key)
		if err != nil {
			return nil, fmt.Errorf("mqtt: tls client key: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("mqtt: tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case f.Cert != "" || f.Key != "":
		return nil, errors.New("mqtt: tls: cert and key go together; one of them is missing")
	}
	return cfg, nil
}
