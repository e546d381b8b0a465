package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ParseOrigin returns the web origin s as a browser sends it in an Origin
// header: scheme://host[:port], the scheme and host in lower case, without
// the scheme's default port (https://app.foxglove.dev:443 is
// https://app.foxglove.dev) and without a trailing slash. It is an error
// for s to have a path, a query, a fragment or credentials, or to be
// "null" or "*": "null" is the origin that sandboxed frames and local
// files send, which any page can take on, so listing it would let any
// page in.
func ParseOrigin(s string) (string, error) {
	switch s {
	case "":
		return "", errors.New("empty: want an origin, scheme://host[:port] (e.g. https://app.foxglove.dev)")
	case "null", "*":
		return "", fmt.Errorf("%s would let any page in: list the origins, scheme://host[:port]", quote(s))
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%s is not an origin: want scheme://host[:port] (e.g. https://app.foxglove.dev)", quote(s))
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("%s is not an origin: want scheme://host[:port], with no path, query or credentials", quote(s))
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%s: port %s is not from 1 to 65535", quote(s), quote(port))
		}
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// checkOrigins checks view.allowed_origins and puts each in the form a
// browser sends (ParseOrigin), so that the live view compares them with
// Origin headers as they are.
func (t *tree) checkOrigins(v *View) {
	for i, o := range v.AllowedOrigins {
		norm, err := ParseOrigin(o)
		if err != nil {
			t.errorAt(index("view.allowed_origins", i), "%v", err)
			continue
		}
		v.AllowedOrigins[i] = norm
	}
}
