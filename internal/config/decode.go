package config

import (
	"encoding"
	"math"
	"reflect"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

var (
	durationType   = reflect.TypeFor[time.Duration]()
	brokerListType = reflect.TypeFor[BrokerList]()
	paramsType     = reflect.TypeFor[Params]()
	unmarshalerT   = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshal  = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// value decodes n into v strictly: unknown keys, duplicate keys and values
// of the wrong kind are reported, and v keeps what it held for every key
// that is absent or null (its defaults). Like yaml.v3, a null sets a
// pointer, map, slice or interface to nil, and a list replaces a slice.
// Scalars are converted by the type of v from their text, so a quoted "4"
// and an expanded ${WORKERS} both fill an int.
func (t *tree) value(n *yaml.Node, path string, v reflect.Value) {
	n, ok := t.enter(n, path)
	if !ok {
		return
	}
	t.push(n)
	defer t.pop(n)
	typ := v.Type()
	if typ == paramsType {
		t.params(n, path, v)
		return
	}
	if t.unmarshal(n, path, v) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			v.SetZero()
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(typ.Elem()))
		}
		t.value(n, path, v.Elem())
	case reflect.Interface:
		if typ.NumMethod() != 0 {
			t.errorf(n, path, "cannot decode into %s", typ)
			return
		}
		if a := t.any(n, path); a != nil {
			v.Set(reflect.ValueOf(a))
		} else {
			v.SetZero()
		}
	case reflect.Struct:
		t.structure(n, path, v)
	case reflect.Map:
		t.mapping(n, path, v)
	case reflect.Slice:
		t.slice(n, path, v)
	case reflect.Array:
		t.array(n, path, v)
	default:
		t.scalar(n, path, v)
	}
}

// unmarshal decodes n into v, addressable and not null, with v's own
// UnmarshalYAML or UnmarshalText where it has one, and reports whether it
// had one (an error is reported at n).
func (t *tree) unmarshal(n *yaml.Node, path string, v reflect.Value) bool {
	if !v.CanAddr() || isNull(n) {
		return false
	}
	typ := v.Type()
	switch {
	case reflect.PointerTo(typ).Implements(unmarshalerT):
		c := t.copy(n, path)
		if c == nil {
			return true
		}
		if err := v.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(c); err != nil {
			t.errorf(n, path, "%s", err)
		}
		return true
	case reflect.PointerTo(typ).Implements(textUnmarshal):
		if n.Kind != yaml.ScalarNode {
			t.errorf(n, path, "must be a string, not %s", describe(n))
			return true
		}
		s, ok := t.text(n, path)
		if !ok || expandedToNothing(n, s) {
			return true
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			t.errorf(n, path, "%s", err)
		}
		return true
	}
	return false
}

func (t *tree) structure(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		t.errorf(n, path, "must be a mapping, not %s", describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	for _, e := range t.entries(n, path) {
		p := join(path, e.name)
		t.record(p, e.key.Line)
		f, ok := fields.byName[e.name]
		if !ok {
			t.errorf(e.key, p, "unknown key%s", suggest(e.name, fields.names))
			continue
		}
		t.value(e.value, p, fieldByIndex(v, f))
	}
}

func (t *tree) mapping(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.MappingNode {
		t.errorf(n, path, "must be a mapping, not %s", describe(n))
		return
	}
	typ := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMap(typ))
	}
	for _, e := range t.entries(n, path) {
		p := join(path, e.name)
		t.record(p, e.key.Line)
		k := reflect.New(typ.Key()).Elem()
		if k.Kind() == reflect.String {
			k.SetString(e.name)
		} else {
			// Keys are not expanded: ${...} in a key is the key.
			lookup := t.lookup
			t.lookup = nil
			t.value(e.key, p, k)
			t.lookup = lookup
		}
		elem := reflect.New(typ.Elem()).Elem()
		t.value(e.value, p, elem)
		v.SetMapIndex(k, elem)
	}
}

func (t *tree) slice(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind == yaml.ScalarNode && v.Type() == brokerListType {
		// One broker is a list of one.
		var s string
		t.value(n, path, reflect.ValueOf(&s).Elem())
		v.Set(reflect.ValueOf(BrokerList{s}))
		return
	}
	if n.Kind == yaml.ScalarNode && v.Type().Elem().Kind() == reflect.Uint8 {
		if s, ok := t.text(n, path); ok {
			v.SetBytes([]byte(s))
		}
		return
	}
	if n.Kind != yaml.SequenceNode {
		what := "a list"
		if v.Type() == brokerListType {
			what = "a broker or a list of broker URLs"
		}
		t.errorf(n, path, "must be %s, not %s", what, describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		t.value(item, index(path, i), s.Index(i))
	}
	v.Set(s)
}

func (t *tree) array(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		t.errorf(n, path, "must be a list, not %s", describe(n))
		return
	}
	if len(n.Content) != v.Len() {
		t.errorf(n, path, "must be a list of %d, not %d", v.Len(), len(n.Content))
		return
	}
	for i, item := range n.Content {
		t.value(item, index(path, i), v.Index(i))
	}
}

func (t *tree) scalar(n *yaml.Node, path string, v reflect.Value) {
	want := kindName(v.Type())
	if want == "" {
		t.errorf(n, path, "cannot decode into %s", v.Type())
		return
	}
	if n.Kind != yaml.ScalarNode {
		t.errorf(n, path, "must be %s, not %s", want, describe(n))
		return
	}
	if isNull(n) {
		return
	}
	s, ok := t.text(n, path)
	if !ok || expandedToNothing(n, s) {
		return
	}
	switch k := v.Kind(); {
	case k == reflect.String:
		v.SetString(s)
	case k == reflect.Bool:
		b, ok := parseBool(s)
		if !ok {
			t.errorf(n, path, "%s is not a boolean", quote(s))
			return
		}
		v.SetBool(b)
	case v.Type() == durationType:
		d, hint, ok := parseDuration(s)
		if !ok {
			t.errorf(n, path, "%s is not a duration%s", quote(s), hint)
			return
		}
		v.SetInt(int64(d))
	case k >= reflect.Int && k <= reflect.Int64:
		bits := v.Type().Bits()
		i, err := parseInt(s, bits)
		if err != nil {
			t.intError(n, path, s, err, strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10))
			return
		}
		v.SetInt(i)
	case k >= reflect.Uint && k <= reflect.Uintptr:
		bits := v.Type().Bits()
		u, err := parseUint(s, bits)
		if err != nil {
			if _, ierr := parseInt(s, 64); ierr == nil {
				err = strconv.ErrRange // negative
			}
			t.intError(n, path, s, err, "0", strconv.FormatUint(1<<bits-1, 10))
			return
		}
		v.SetUint(u)
	default: // float
		f, ok := parseFloat(s)
		if !ok {
			t.errorf(n, path, "%s is not a number", quote(s))
			return
		}
		if k == reflect.Float32 && math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
			t.errorf(n, path, "%s is out of range for a 32-bit number", quote(s))
			return
		}
		v.SetFloat(f)
	}
}

func (t *tree) intError(n *yaml.Node, path, s string, err error, lo, hi string) {
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange || err == strconv.ErrRange {
		t.errorf(n, path, "%s is out of range (%s to %s)", quote(s), lo, hi)
		return
	}
	t.errorf(n, path, "%s is not an integer", quote(s))
}

// any decodes n as yaml.v3 does into an interface: map[string]any, []any,
// string, int (int64 or uint64 when larger), float64, bool or nil.
func (t *tree) any(n *yaml.Node, path string) any {
	n, ok := t.enter(n, path)
	if !ok {
		return nil
	}
	t.push(n)
	defer t.pop(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, e := range t.entries(n, path) {
			p := join(path, e.name)
			t.record(p, e.key.Line)
			m[e.name] = t.any(e.value, p)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, item := range n.Content {
			s[i] = t.any(item, index(path, i))
		}
		return s
	}
	if isNull(n) {
		return nil
	}
	s, ok := t.text(n, path)
	if !ok || expandedToNothing(n, s) {
		return nil
	}
	tag := n.Tag
	if tag == "!!str" && n.Style == 0 {
		// A plain scalar that yaml.v3 saw as a string may hold the
		// expansion of ${VAR}: type its text now.
		tag = resolve(s)
	}
	switch tag {
	case "!!null":
		return nil
	case "!!bool":
		b, _ := parseBool(s)
		return b
	case "!!int":
		if i, err := parseInt(s, 64); err == nil {
			if i == int64(int(i)) {
				return int(i)
			}
			return i
		}
		if u, err := parseUint(s, 64); err == nil {
			return u
		}
	case "!!float":
		if f, ok := parseFloat(s); ok {
			return f
		}
	}
	return s
}

func (t *tree) params(n *yaml.Node, path string, v reflect.Value) {
	p := Params{src: t.src, path: path}
	if !isNull(n) {
		if n.Kind != yaml.MappingNode {
			t.errorf(n, path, "must be a mapping, not %s", describe(n))
			return
		}
		t.budget++ // copy visits n again
		p.node = t.copy(n, path)
	}
	v.Set(reflect.ValueOf(p))
}

// kindName names the scalar kind of type typ for a message, or returns ""
// for a type no scalar decodes into.
func kindName(typ reflect.Type) string {
	if typ == durationType {
		return "a duration"
	}
	switch typ.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return ""
}
