package executor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A worker that parked, found work and takes itself back after a trigger
// had already popped it (model/README.md, the idle-twice check): it takes
// the trigger's wake-up too, so that its next park waits, and it is on
// the idle stack nowhere.
func TestTakeBackAfterAWake(t *testing.T) {
	e := New(Options{Workers: 2})
	w := e.workers[0]
	e.mu.Lock()
	e.idle = append(e.idle, w)
	e.nidle.Add(1)
	e.mu.Unlock()

	e.wake() // a trigger: pops w and signals it
	e.takeBack(w)
	require.Empty(t, w.wake, "the wake-up is taken, not left for the next park")
	require.Empty(t, e.idle)
	require.Zero(t, e.nidle.Load())

	// Taken back before any trigger: off the stack, no wake-up to take.
	e.mu.Lock()
	e.idle = append(e.idle, w)
	e.nidle.Add(1)
	e.mu.Unlock()
	e.takeBack(w)
	require.Empty(t, w.wake)
	require.Empty(t, e.idle)
	require.Zero(t, e.nidle.Load())
}
