package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"

	"github.com/robotexec/robotexec/internal/smallfile"
)

// checkFiles reports the TLS files that the connection could not use:
// missing, not regular files, over 1 MiB, unreadable, not PEM, a CA file
// without a CA certificate, or a key that does not match its
// certificate. It checks what the client loads when it connects, so that
// validate finds what run would.
func (c *Config) checkFiles() error {
	t := c.MQTT.TLS
	if t == nil {
		return nil
	}
	var errs []error
	data := make(map[string][]byte)
	for _, f := range []struct{ key, path string }{{"ca", t.CA}, {"cert", t.Cert}, {"key", t.Key}} {
		if f.path == "" {
			continue
		}
		b, err := readTLSFile(f.path)
		if err != nil {
			e := c.Errorf("mqtt.tls."+f.key, "%s: %s", f.path, err)
			e.Err = err
			errs = append(errs, e)
			continue
		}
		data[f.key] = b
	}
	if b, ok := data["ca"]; ok {
		if msg := caProblem(b); msg != "" {
			errs = append(errs, c.Errorf("mqtt.tls.ca", "%s: %s", t.CA, msg))
		}
	}
	cert, okc := data["cert"]
	key, okk := data["key"]
	if okc && okk {
		if msg := pairProblem(cert, key); msg != "" {
			errs = append(errs, c.Errorf("mqtt.tls.key", "%s: %s", t.Key, msg))
		}
	}
	return errors.Join(errs...)
}

// readTLSFile reads a small regular file; its errors name no path.
func readTLSFile(path string) ([]byte, error) {
	if err := smallfile.Check(path); err != nil {
		return nil, err
	}
	b, err := smallfile.Read(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, pe.Err // permission denied, ...
	}
	return b, err
}

// caProblem says what keeps b, a CA file, from being used: no PEM
// certificate, or none of a certificate authority.
func caProblem(b []byte) string {
	var n int
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return fmt.Sprintf("certificate %d cannot be parsed: %v", n, err)
		}
		if cert.IsCA {
			return ""
		}
	}
	if n == 0 {
		return "holds no PEM certificate"
	}
	return "holds no CA certificate (basic constraints CA:TRUE): is it the client's or the broker's own certificate?"
}

// pairProblem says why the certificate and key files cannot go together.
func pairProblem(cert, key []byte) string {
	if blk, _ := pem.Decode(cert); blk == nil {
		return "the certificate (mqtt.tls.cert) holds no PEM block"
	}
	if blk, _ := pem.Decode(key); blk == nil {
		return "holds no PEM block"
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return fmt.Sprintf("does not go with the certificate: %v", err)
	}
	return ""
}
