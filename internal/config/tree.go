package config

import (
	"fmt"
	"strconv"
	"unicode"

	"gopkg.in/yaml.v3"
)

// tree holds what the decoding of one document shares: its file, the
// problems found, the lines of the values seen, and the guards against
// alias bombs and alias cycles.
type tree struct {
	file string
	// lookup expands ${VAR} in scalars; nil when they are used as they
	// are (Params hold values expanded already).
	lookup func(string) (string, bool)
	errs   []*Error
	// lines maps the path of each value seen to its line (the line of its
	// key, for a value in a mapping); nil when not recorded.
	lines map[string]int
	// src hands the file and lines over to Params and Nodes.
	src *source
	// failed holds the paths of values that were not of the right kind.
	failed map[string]bool
	// budget is the number of values left to visit. Aliases let a small
	// document expand into an exponential number of values ("billion
	// laughs"); the budget stops that.
	budget int
	// active holds the anchored collections being visited, so that an
	// alias to one of them (a cycle) is reported instead of followed.
	active map[*yaml.Node]int
}

func newTree(file string, root *yaml.Node, lookup func(string) (string, bool)) *tree {
	return &tree{
		file:   file,
		lookup: lookup,
		budget: 10*countNodes(root) + 10000,
		active: map[*yaml.Node]int{},
	}
}

func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

func (t *tree) errorf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	t.errs = append(t.errs, &Error{File: t.file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)})
	if t.failed != nil {
		t.failed[path] = true
	}
}

func (t *tree) record(path string, line int) {
	if t.lines != nil {
		if _, ok := t.lines[path]; !ok {
			t.lines[path] = line
		}
	}
}

// enter charges the budget for visiting n and follows an alias; it returns
// false when n must not be visited.
func (t *tree) enter(n *yaml.Node, path string) (*yaml.Node, bool) {
	if n == nil || t.budget <= 0 {
		return nil, false
	}
	t.budget--
	if t.budget == 0 {
		t.errorf(n, path, "the document expands into too many values (aliases of aliases?)")
		return nil, false
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			t.errorf(n, path, "unknown alias *%s", n.Value)
			return nil, false
		}
		if t.active[n.Alias] > 0 {
			t.errorf(n, path, "alias *%s refers to a value that contains it", n.Value)
			return nil, false
		}
		n = n.Alias
	}
	t.record(path, n.Line)
	return n, true
}

// push marks an anchored collection as being visited; pop unmarks it.
func (t *tree) push(n *yaml.Node) {
	if n.Anchor != "" {
		t.active[n]++
	}
}

func (t *tree) pop(n *yaml.Node) {
	if n.Anchor != "" {
		t.active[n]--
	}
}

// text returns a scalar's value, expanded.
func (t *tree) text(n *yaml.Node, path string) (string, bool) {
	if t.lookup == nil {
		return n.Value, true
	}
	s, err := expand(n.Value, t.lookup)
	if err != nil {
		t.errorf(n, path, "%s", err)
		return "", false
	}
	return s, true
}

// entry is one key and value of a mapping.
type entry struct {
	key, value *yaml.Node
	name       string
}

// entries returns the keys and values of mapping n, with those of merge
// keys (<<: *defaults) after the mapping's own, which take precedence.
// Duplicate and non-scalar keys are reported and left out.
func (t *tree) entries(n *yaml.Node, path string) []entry {
	seen := map[string]*yaml.Node{}
	var out []entry
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			t.errorf(k, path, "%s is not a valid key", describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			t.errorf(k, join(path, k.Value), "duplicate key (first at line %d)", first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, entry{key: k, value: v, name: k.Value})
	}
	for _, m := range merges {
		out = t.merge(m, path, seen, out)
	}
	return out
}

// merge adds the entries of merge source m whose keys are not seen yet.
func (t *tree) merge(m *yaml.Node, path string, seen map[string]*yaml.Node, out []entry) []entry {
	m, ok := t.enter(m, join(path, "<<"))
	if !ok {
		return out
	}
	switch m.Kind {
	case yaml.MappingNode:
		t.push(m)
		defer t.pop(m)
		for _, e := range t.entries(m, path) {
			if _, dup := seen[e.name]; !dup {
				seen[e.name] = e.key
				out = append(out, e)
			}
		}
	case yaml.SequenceNode:
		t.push(m)
		defer t.pop(m)
		for _, s := range m.Content {
			if s.Kind == yaml.SequenceNode {
				t.errorf(s, join(path, "<<"), "must be a mapping or a list of mappings, not a list of lists")
				continue
			}
			out = t.merge(s, path, seen, out)
		}
	default:
		if !isNull(m) {
			t.errorf(m, join(path, "<<"), "must be a mapping or a list of mappings, not %s", describe(m))
		}
	}
	return out
}

// copy returns a deep copy of n with aliases and merge keys resolved,
// duplicate keys left out and reported, and scalars expanded, for Params.
// It returns nil when n must not be visited.
func (t *tree) copy(n *yaml.Node, path string) *yaml.Node {
	n, ok := t.enter(n, path)
	if !ok {
		return nil
	}
	c := &yaml.Node{Kind: n.Kind, Style: n.Style, Tag: n.Tag, Line: n.Line, Column: n.Column}
	switch n.Kind {
	case yaml.ScalarNode:
		c.Value = n.Value
		if !isNull(n) {
			if s, ok := t.text(n, path); ok {
				c.Value = s
				if expandedToNothing(n, s) {
					c.Tag = "!!null"
				}
			}
		}
	case yaml.MappingNode:
		t.push(n)
		defer t.pop(n)
		for _, e := range t.entries(n, path) {
			p := join(path, e.name)
			t.record(p, e.key.Line)
			k := &yaml.Node{Kind: e.key.Kind, Style: e.key.Style, Tag: e.key.Tag, Value: e.key.Value, Line: e.key.Line, Column: e.key.Column}
			v := t.copy(e.value, p)
			if v == nil {
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: e.key.Line, Column: e.key.Column}
			}
			c.Content = append(c.Content, k, v)
		}
	case yaml.SequenceNode:
		t.push(n)
		defer t.pop(n)
		for i, item := range n.Content {
			v := t.copy(item, index(path, i))
			if v == nil {
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: item.Line, Column: item.Column}
			}
			c.Content = append(c.Content, v)
		}
	default:
		return nil
	}
	return c
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// expandedToNothing reports whether scalar n, whose expanded text is s,
// was not empty before expansion and is now: it then counts as null, so
// that ${WORKERS:-} keeps the default.
func expandedToNothing(n *yaml.Node, s string) bool { return s == "" && n.Value != "" }

// describe names the value of n for a message: "a mapping", "a list", or
// the scalar quoted.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if isNull(n) {
		return "null"
	}
	return quote(n.Value)
}

// join returns the path of key in the mapping at path. A key that would
// make the path ambiguous or span lines is quoted: labels."a.b".
func join(path, key string) string {
	if plainKey(key) {
		return joinPath(path, key)
	}
	return joinPath(path, strconv.Quote(key))
}

// joinPath appends path sub, a key or keys, to path.
func joinPath(path, sub string) string {
	if path == "" {
		return sub
	}
	return path + "." + sub
}

func plainKey(key string) bool {
	for _, r := range key {
		if r == '.' || r == '[' || r == ']' || r == '"' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return key != ""
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
