package config

import (
	"fmt"
	"os"
	"strings"
)

// expand replaces ${VAR} and ${VAR:-default} in s with values from lookup.
//
// ${VAR:-default} takes the default when VAR is unset or empty, as in a
// shell; the default may itself hold ${...}, expanded only when used. $$ is
// a literal $. Any other $ is literal too, so MQTT topics like $SYS/# and
// $share/group/topic need no escaping. The expansion is not recursive: a
// variable's value is used as it is.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	x := expander{s: s, lookup: lookup}
	var b strings.Builder
	if _, err := x.scan(0, false, true, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// expander expands one string in a single pass, so that nested defaults
// cost no more than their length.
type expander struct {
	s      string
	lookup func(string) (string, bool)
}

// scan expands s from i into b (when eval) up to the end of s or, when
// nested in a default, up to the '}' that closes it; it returns the index
// after what it consumed.
func (x *expander) scan(i int, nested, eval bool, b *strings.Builder) (int, error) {
	s := x.s
	for i < len(s) {
		switch {
		case nested && s[i] == '}':
			return i + 1, nil
		case strings.HasPrefix(s[i:], "$$"):
			if eval {
				b.WriteByte('$')
			}
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			next, err := x.substitute(i, eval, b)
			if err != nil {
				return 0, err
			}
			i = next
		default:
			if eval {
				b.WriteByte(s[i])
			}
			i++
		}
	}
	if nested {
		return 0, x.unterminated()
	}
	return i, nil
}

// substitute expands the ${...} expression at i; it returns the index
// after it.
func (x *expander) substitute(i int, eval bool, b *strings.Builder) (int, error) {
	s := x.s
	k := i + 2
	for k < len(s) && isVarChar(s[k]) {
		k++
	}
	name := s[i+2 : k]
	switch {
	case k == len(s):
		return 0, x.unterminated()
	case name == "" || name[0] >= '0' && name[0] <= '9' || s[k] != '}' && !strings.HasPrefix(s[k:], ":-"):
		expr := s[i:]
		if end := strings.IndexByte(expr, '}'); end >= 0 {
			expr = expr[:end+1]
		}
		return 0, fmt.Errorf("bad substitution %s: want ${NAME} or ${NAME:-default}, NAME of letters, digits and _", quote(expr))
	}
	var v string
	var set bool
	if eval {
		v, set = x.lookup(name)
	}
	if s[k] == '}' {
		if eval && !set {
			return 0, fmt.Errorf("environment variable %s is not set", name)
		}
		b.WriteString(v)
		return k + 1, nil
	}
	useDefault := eval && v == ""
	if !useDefault {
		b.WriteString(v)
	}
	return x.scan(k+2, true, useDefault, b)
}

func (x *expander) unterminated() error {
	return fmt.Errorf(`unterminated "${" in %s (write "$$" for a literal "$")`, quote(x.s))
}

func isVarChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// envLookup returns lookup, or os.LookupEnv when it is nil, with the host
// name as a fallback for HOSTNAME: shells set HOSTNAME without exporting
// it, so a program rarely sees it in its environment.
func envLookup(lookup func(string) (string, bool)) func(string) (string, bool) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return func(name string) (string, bool) {
		v, ok := lookup(name)
		if !ok && name == "HOSTNAME" {
			if h, err := os.Hostname(); err == nil && h != "" {
				return h, true
			}
		}
		return v, ok
	}
}
