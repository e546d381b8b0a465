package mqtt

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// endpoint is a broker of the list, with the credentials the client
// gives it.
type endpoint struct {
	url                *url.URL // without credentials
	display            string   // the URL for logs and errors
	username, password string
}

// parseBrokers parses Broker or Brokers into brokers.
func (s *settings) parseBrokers() error {
	urls := s.Brokers
	switch {
	case len(urls) > 0 && s.Broker != "":
		return fmt.Errorf("mqtt: Broker %s and Brokers both set", redactRaw(s.Broker))
	case len(urls) == 0 && s.Broker == "":
		urls = []string{DefaultBroker}
	case len(urls) == 0:
		urls = []string{s.Broker}
	}
	var errs []error
	for _, raw := range urls {
		ep, err := s.parseBroker(raw)
		errs = append(errs, err)
		s.brokers = append(s.brokers, ep)
	}
	return errors.Join(errs...)
}

// parseBroker parses a broker URL into an endpoint: its credentials are
// the endpoint's unless Username and Password are set.
func (s *settings) parseBroker(raw string) (*endpoint, error) {
	ep := &endpoint{username: s.Username, password: s.Password, display: redactRaw(raw)}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error repeats the URL, password included.
		return ep, fmt.Errorf("mqtt: broker URL %q does not parse", redactRaw(raw))
	}
	if u.User != nil {
		if ep.username == "" {
			ep.username = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && ep.password == "" {
			ep.password = p
		}
		u.User = nil
	}
	ep.url = u
	ep.display = u.String()
	var errs []error
	switch strings.ToLower(u.Scheme) {
	case "tcp", "mqtt", "ssl", "tls", "mqtts", "tcps", "ws", "wss":
	default:
		errs = append(errs, fmt.Errorf("mqtt: broker URL %s: scheme %q is not tcp, mqtt, ssl, tls, mqtts, ws or wss", u.Redacted(), u.Scheme))
	}
	if u.Host == "" {
		errs = append(errs, fmt.Errorf("mqtt: broker URL %s has no host", u.Redacted()))
	}
	return ep, errors.Join(errs...)
}

// redactRaw hides the user information of a URL that does not parse.
func redactRaw(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "xxxxx@" + rest[at+1:]
	}
	if scheme == "" {
		return rest
	}
	return scheme + "://" + rest
}
