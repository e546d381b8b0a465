package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a number of bytes, written in a config as an integer ("1048576")
// or with a unit: B, KiB, MiB, GiB (powers of 1024) or kB, MB, GB (powers
// of 1000), with or without a space ("1MiB", "512 KiB").
type Size int64

// sizeUnits are the units of a Size, longest first within a prefix.
var sizeUnits = []struct {
	name string
	n    int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// UnmarshalText parses a size.
func (s *Size) UnmarshalText(text []byte) error {
	t := strings.TrimSpace(string(text))
	num, mult := t, int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.name); ok {
			num, mult = strings.TrimSpace(rest), u.n
			break
		}
	}
	n, err := parseInt(num, 64)
	if err != nil || n < 0 || (n > 0 && mult > 1<<62/n) {
		return fmt.Errorf("%s is not a size (bytes, or a number with B, KiB, MiB, GiB, kB, MB or GB)", quote(t))
	}
	*s = Size(n * mult)
	return nil
}

// String formats the size with the largest binary unit that divides it.
func (s Size) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if s != 0 && int64(s)%u.n == 0 {
			return strconv.FormatInt(int64(s)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}
