package config

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The scalar parsers below follow yaml.v3, so that a value means here what
// it would mean to yaml.Unmarshal: integers as Go literals (0x, 0o, 0b,
// underscores), YAML 1.2 floats with .inf and .nan, and booleans with the
// YAML 1.1 words (yes, no, on, off) accepted for boolean fields.

var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

func parseInt(s string, bits int) (int64, error) {
	return strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, bits)
}

func parseUint(s string, bits int) (uint64, error) {
	return strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, bits)
}

func parseFloat(s string) (float64, bool) {
	switch s {
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1), true
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1), true
	case ".nan", ".NaN", ".NAN":
		return math.NaN(), true
	}
	if i, err := parseInt(s, 64); err == nil {
		return float64(i), true
	}
	if yamlFloat.MatchString(s) {
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

func parseBool(s string) (value, ok bool) {
	switch s {
	case "true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// parseDuration parses a Go duration ("50ms", "1h30m"). A bare number is
// rejected, as yaml.v3 does: a period of 5 means nothing without a unit.
func parseDuration(s string) (time.Duration, string, bool) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, "", true
	}
	if _, ok := parseFloat(s); ok {
		return 0, " (a duration needs a unit: " + s + "ms, " + s + "s, ...)", false
	}
	return 0, "", false
}

// resolve returns the YAML 1.2 core type of a plain scalar's text, as the
// tag yaml.v3 gives it: !!null, !!bool, !!int, !!float or !!str. The values
// decoded into `any` use it to type a plain scalar whose text came from
// ${VAR} expansion, which the YAML parser saw as a string.
func resolve(s string) string {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return "!!null"
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	}
	if _, err := parseInt(s, 64); err == nil {
		return "!!int"
	}
	if _, err := parseUint(s, 64); err == nil {
		return "!!int"
	}
	if _, ok := parseFloat(s); ok {
		return "!!float"
	}
	return "!!str"
}

// quote returns s quoted for a message, shortened when long.
func quote(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
