package nodes

import (
	"fmt"
	"sort"
	"sync"
)

// Constructor builds a node: it reads its params and registers its
// callbacks, then returns. A non-nil error fails the node's construction.
type Constructor func(n *Node) error

// TypeInfo describes a registered node type.
type TypeInfo struct {
	Name        string
	Description string
	New         Constructor
}

var (
	registryMu sync.RWMutex
	registry   = map[string]TypeInfo{}
)

// Register makes a node type available to config.yaml under typ, with a
// one-line description for `robotexec nodes`. Call it from an init
// function. It panics if typ is empty or already registered, or new is nil.
func Register(typ, description string, new Constructor) {
	if typ == "" || new == nil {
		panic("nodes: Register needs a type name and a constructor")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[typ]; dup {
		panic(fmt.Sprintf("nodes: node type %q registered twice", typ))
	}
	registry[typ] = TypeInfo{Name: typ, Description: description, New: new}
}

// Lookup returns the registered node type typ.
func Lookup(typ string) (TypeInfo, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	t, ok := registry[typ]
	return t, ok
}

// Types returns every registered node type, sorted by name.
func Types() []TypeInfo {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]TypeInfo, 0, len(registry))
	for _, t := range registry {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// typeNames returns the names of every registered node type, sorted.
func typeNames() []string {
	var names []string
	for _, t := range Types() {
		names = append(names, t.Name)
	}
	return names
}
