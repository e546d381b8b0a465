package executor

import (
	"reflect"
	"runtime"
)

// callEntries are the entry addresses of the two functions through which a
// worker calls every callback (callTimer and callMessage): a goroutine
// whose stack holds one of them is running a callback.
var callEntries = [2]uintptr{
	reflect.ValueOf((*Executor).callTimer).Pointer(),
	reflect.ValueOf((*Executor).callMessage).Pointer(),
}

// inCallback reports whether the calling goroutine is running a callback
// of an executor: whether callTimer or callMessage is on its stack. A
// goroutine that a callback started is not: its stack begins at the
// function it was started with.
//
// The node API's callbacks take no context (docs/nodes.md), so the
// goroutine is the only context a publication carries. Reading the stack
// costs 1.4-1.8 µs from a callback 10 calls deep (BenchmarkInCallback);
// Publisher asks only when the answer changes what a publication does (a
// full Block queue, an overloaded one), at most once per publication.
func inCallback() bool {
	var buf [64]uintptr
	pcs := buf[:]
	for {
		n := runtime.Callers(2, pcs)
		for _, pc := range pcs[:n] {
			// A return address: the call is the instruction before.
			if f := runtime.FuncForPC(pc - 1); f != nil {
				if entry := f.Entry(); entry == callEntries[0] || entry == callEntries[1] {
					return true
				}
			}
		}
		if n < len(pcs) {
			return false
		}
		pcs = make([]uintptr, 4*len(pcs)) // a deep stack: look again, further
	}
}
