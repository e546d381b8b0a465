package bus

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestRunSlot: a run's context is 8 bytes, its executor's one allocation
// per run; the runs of one worker keep their state in the worker's slot,
// one after another, and what a run recorded (an overload, its Done
// channel) is not the next run's, while the run that ended stays done.
func TestRunSlot(t *testing.T) {
	require.EqualValues(t, 8, unsafe.Sizeof(Run{}))

	slot := (&RunScope{Stop: context.Background()}).NewSlot()
	s, err := New("t", Options{})
	require.NoError(t, err)

	r1 := slot.NewRun()
	require.NoError(t, r1.enter())
	r1.overloaded(s)
	r1.leave()
	done1 := r1.Done()
	require.Same(t, s, r1.Overloaded())
	require.Same(t, s, r1.End())
	<-done1
	require.ErrorIs(t, r1.Err(), context.Canceled)

	r2 := slot.NewRun()
	require.Nil(t, r2.Overloaded(), "the run before's overload")
	require.NoError(t, r2.Err())
	select {
	case <-r2.Done():
		t.Fatal("r2 is done with r1")
	default:
	}
	// The run before stays done while r2 runs, and cannot publish as it.
	require.ErrorIs(t, r1.Err(), context.Canceled)
	require.ErrorIs(t, r1.enter(), context.Canceled)
	<-r1.Done()
	require.Nil(t, r2.End())
	<-r2.Done()
	require.ErrorIs(t, r2.Err(), context.Canceled)

	// A run that ended before anyone asked for Done gives a closed one.
	r3 := slot.NewRun()
	require.Nil(t, r3.End())
	<-r3.Done()
}

// TestRunSlotEndWaitsForPublications: End returns only once the
// publications under the run in progress have left, and their overload
// is its result.
func TestRunSlotEndWaitsForPublications(t *testing.T) {
	slot := (&RunScope{Stop: context.Background()}).NewSlot()
	s, err := New("t", Options{})
	require.NoError(t, err)
	for range 200 {
		r := slot.NewRun()
		require.NoError(t, r.enter())
		go func() {
			r.overloaded(s)
			r.leave()
		}()
		require.Same(t, s, r.End(), "End returned before the publication left")
	}
}
