package bus

import (
	"fmt"
	"strings"
)

// ValidateFilter checks an MQTT topic filter: not empty, '+' only as a
// whole level, '#' only as the whole last level, no NUL, at most 65535
// bytes.
func ValidateFilter(filter string) error {
	if err := validateCommon(filter); err != nil {
		return fmt.Errorf("subscribers: topic filter %q: %w", filter, err)
	}
	levels := strings.Split(filter, "/")
	for i, level := range levels {
		switch {
		case level == "#" && i != len(levels)-1:
			return fmt.Errorf("subscribers: topic filter %q: '#' must be the last level", filter)
		case level != "#" && level != "+" && strings.ContainsAny(level, "+#"):
			return fmt.Errorf("subscribers: topic filter %q: '+' and '#' must fill a whole level", filter)
		}
	}
	return nil
}

// ValidateTopic checks an MQTT topic name for publishing: not empty, no
// wildcards, no NUL, at most 65535 bytes.
func ValidateTopic(topic string) error {
	if err := validateCommon(topic); err != nil {
		return fmt.Errorf("subscribers: topic %q: %w", topic, err)
	}
	if strings.ContainsAny(topic, "+#") {
		return fmt.Errorf("subscribers: topic %q: wildcards are not allowed in a topic name", topic)
	}
	return nil
}

func validateCommon(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty")
	case len(s) > 65535:
		return fmt.Errorf("longer than 65535 bytes")
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("contains NUL")
	}
	return nil
}

// Match reports whether topic matches filter under MQTT rules. Wildcards at
// the first level do not match topics that start with '$'. No filter
// matches the empty topic: a topic name is at least one character long
// (MQTT 5, 4.7.3), so a PUBLISH without one (and without a Topic Alias,
// which robotexec never allows the broker to use) is for no subscription,
// and "#" does not take it. It allocates nothing.
func Match(filter, topic string) bool {
	if topic == "" {
		return false
	}
	if topic[0] == '$' && len(filter) > 0 && (filter[0] == '+' || filter[0] == '#') {
		return false
	}
	for {
		fl, frest, fmore := cut(filter)
		if fl == "#" {
			return true
		}
		tl, trest, tmore := cut(topic)
		if fl != "+" && fl != tl {
			return false
		}
		if !fmore || !tmore {
			// "a/#" also matches "a": '#' includes the parent level.
			return fmore == tmore || (fmore && frest == "#")
		}
		filter, topic = frest, trest
	}
}

// cut splits off the first level of a topic.
func cut(s string) (level, rest string, more bool) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// sharePrefix starts a shared subscription's filter, $share/GROUP/FILTER.
const sharePrefix = "$share/"

// RouteFilter returns the filter that topics are matched against for a
// subscription filter: the filter itself, or FILTER for a shared
// subscription $share/GROUP/FILTER, whose messages the broker splits among
// the members of GROUP. It fails, naming the filter, when the filter is
// malformed.
func RouteFilter(filter string) (string, error) {
	if err := ValidateFilter(filter); err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(filter, sharePrefix)
	if !ok {
		if filter == "$share" {
			return "", fmt.Errorf("subscribers: topic filter %q: a shared subscription is $share/GROUP/FILTER", filter)
		}
		return filter, nil
	}
	group, inner, ok := strings.Cut(rest, "/")
	switch {
	case !ok || group == "" || inner == "":
		return "", fmt.Errorf("subscribers: topic filter %q: a shared subscription is $share/GROUP/FILTER", filter)
	case strings.ContainsAny(group, "+#"):
		return "", fmt.Errorf("subscribers: topic filter %q: the group of a shared subscription has no wildcards", filter)
	}
	return inner, nil
}

// Shared reports whether filter is a shared subscription's,
// $share/GROUP/FILTER.
func Shared(filter string) bool { return strings.HasPrefix(filter, sharePrefix) }

// Overlap reports whether some topic matches both filter a and filter b,
// each a valid filter: the filters of a subscription and of what a bridge
// publishes, say, whose overlap would feed the bridge its own output.
// Wildcards at the first level match no topic that starts with '$', and
// no filter matches the empty topic.
func Overlap(a, b string) bool {
	if (isWild(a) && hasDollar(b)) || (isWild(b) && hasDollar(a)) {
		return false
	}
	for first := true; ; first = false {
		la, ra, ma := cut(a)
		lb, rb, mb := cut(b)
		switch {
		case la == "#" || lb == "#":
			return true
		case la != "+" && lb != "+" && la != lb:
			return false
		case !ma || !mb:
			// One ends here: the other must end too, or go on with
			// a '#' alone, which matches the parent level. A topic
			// of one empty level ("+" and "/#") is the empty topic.
			if first && (la == "" || lb == "") {
				return false
			}
			return ma == mb || (ma && ra == "#") || (mb && rb == "#")
		}
		a, b = ra, rb
	}
}

// isWild reports whether filter starts with a wildcard level.
func isWild(filter string) bool {
	return strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")
}

// hasDollar reports whether a filter's topics all start with '$'.
func hasDollar(filter string) bool { return strings.HasPrefix(filter, "$") }
