package config

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// fields are the keys of a struct type, by yaml tag.
type fields struct {
	byName map[string][]int // key → index path, through inlined structs
	names  []string         // keys in field order, for messages
}

var fieldCache sync.Map // reflect.Type → *fields

// fieldsOf returns the keys of struct type typ as yaml.v3 names them: the
// yaml tag's name, or the field's name in lower case; "-" skips a field and
// ",inline" merges the fields of an embedded struct. Unexported fields are
// skipped.
func fieldsOf(typ reflect.Type) *fields {
	if f, ok := fieldCache.Load(typ); ok {
		return f.(*fields)
	}
	f := &fields{byName: map[string][]int{}}
	f.add(typ, nil, 0)
	fieldCache.Store(typ, f)
	return f
}

func (f *fields) add(typ reflect.Type, prefix []int, depth int) {
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), prefix...), i)
		if hasOpt(opts, "inline") && sf.Type.Kind() == reflect.Struct && depth < 16 {
			f.add(sf.Type, idx, depth+1)
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		if _, dup := f.byName[name]; dup {
			continue // the first field of a name wins
		}
		f.byName[name] = idx
		f.names = append(f.names, name)
	}
}

func hasOpt(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// fieldByIndex returns the field of struct v at index path idx.
func fieldByIndex(v reflect.Value, idx []int) reflect.Value {
	for _, i := range idx {
		v = v.Field(i)
	}
	return v
}

// suggest returns the hint after "unknown key": the closest known key, or
// the list of them.
func suggest(name string, known []string) string {
	if len(known) == 0 {
		return " (none is allowed here)"
	}
	if best := Closest(name, known); best != "" {
		return "; did you mean " + strconv.Quote(best) + "?"
	}
	return " (known keys: " + strings.Join(known, ", ") + ")"
}

// Closest returns the name of known closest to name, a misspelling of it
// (at most two edits away, case ignored), or "" when none is that close.
func Closest(name string, known []string) string {
	best, dist := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(name), strings.ToLower(k)); d < dist && d < len(k) {
			best, dist = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
