package config

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Params holds the params: mapping of a node, not decoded yet: the node's
// type, registered elsewhere, knows its fields. Its values are already
// expanded (${VAR}), its aliases and merge keys resolved, and its duplicate
// keys reported by Parse. The zero Params is empty.
//
// Params is immutable and safe for concurrent use.
type Params struct {
	src  *source
	path string     // nodes[I].params
	node *yaml.Node // a mapping, or nil when absent or null
}

// IsZero reports whether the params are absent, null or an empty mapping.
func (p Params) IsZero() bool { return p.node == nil || len(p.node.Content) == 0 }

// Decode decodes the params strictly into dst, a non-nil pointer, usually
// to a struct whose fields carry yaml tags (`yaml:"period"`; without a tag
// the key is the field's name in lower case). Fields whose key is absent
// keep their value, so dst may hold the defaults. Nested structs, pointers,
// slices, arrays, maps, interfaces (as map[string]any, []any, string, int,
// float64, bool), time.Duration (a Go duration: "50ms", "1h30m"), and types
// implementing encoding.TextUnmarshaler or yaml.Unmarshaler are decoded.
//
// An unknown key, a duplicate key or a value of the wrong kind is an error;
// Decode reports every one as an *Error located in the file
// (config.yaml:12: nodes[1].params.period: "fast" is not a duration),
// joined in line order. Fields decoded before a problem keep their new
// values. Absent or empty params leave dst unchanged.
func (p Params) Decode(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("config: Params.Decode needs a non-nil pointer, not %T", dst)
	}
	if p.IsZero() {
		return nil
	}
	t := newTree(p.src.name(), p.node, nil)
	t.src = p.src
	t.value(p.node, p.path, v.Elem())
	return joinErrors(t.errs)
}

// Errorf returns an error located at the params' field (a key, or a path
// like "filters[2].alpha"), for problems Decode cannot see: two params
// that contradict each other, a malformed topic. The line is that of the
// field, else of the closest enclosing value that has one.
func (p Params) Errorf(field, format string, args ...any) *Error {
	path := p.path
	if field != "" {
		if strings.HasPrefix(field, "[") {
			path += field
		} else {
			path = joinPath(path, field)
		}
	}
	line := p.src.line(path)
	if line == 0 && p.node != nil {
		line = p.node.Line
	}
	return &Error{File: p.src.name(), Line: line, Field: path, Msg: fmt.Sprintf(format, args...)}
}

// source is a parsed file and the lines of its values, shared by a Config,
// its Nodes and their Params, and read-only once Parse has returned.
type source struct {
	file  string
	lines map[string]int // path → line
}

func (s *source) name() string {
	if s == nil {
		return ""
	}
	return s.file
}

// line returns the line recorded for path, else for its closest parent,
// else 0.
func (s *source) line(path string) int {
	if s == nil {
		return 0
	}
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			break
		}
		path = path[:cut]
	}
	return 0
}
