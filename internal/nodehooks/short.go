package nodehooks

import "sync"

var (
	shortMu sync.RWMutex
	short   = map[string]bool{}
)

// MarkShort says that the node type typ's callbacks are short (a copy, a
// check, a timestamp): robotexec run runs a config of such types alone on
// one processor (executor.procs). The built-in types call it as they
// register.
func MarkShort(typ string) {
	shortMu.Lock()
	short[typ] = true
	shortMu.Unlock()
}

// Short reports whether MarkShort marked typ.
func Short(typ string) bool {
	shortMu.RLock()
	defer shortMu.RUnlock()
	return short[typ]
}
