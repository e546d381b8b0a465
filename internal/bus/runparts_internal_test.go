package bus

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestRunOwnParts: a run's context is 16 bytes, its executor's one
// allocation per run, and the parts that only some runs need (the
// subscription a publication left overloaded, the Done channel) are the
// run's own: what one run records, another run of the same scope does
// not see.
func TestRunOwnParts(t *testing.T) {
	require.EqualValues(t, 16, unsafe.Sizeof(Run{}))

	scope := &RunScope{Stop: context.Background()}
	r1, r2 := scope.NewRun(), scope.NewRun()
	s, err := New("t", Options{})
	require.NoError(t, err)
	r1.overloaded(s)
	done1 := r1.Done()
	require.Same(t, s, r1.Overloaded())
	require.Nil(t, r2.Overloaded(), "another run's overload")
	require.Nil(t, scope.base.over.Load(), "the scope's shared part is never written")
	require.Nil(t, scope.base.done.Load())

	require.Same(t, s, r1.End())
	<-done1
	require.ErrorIs(t, r1.Err(), context.Canceled)
	require.NoError(t, r2.Err(), "another run's end")
	select {
	case <-r2.Done():
		t.Fatal("r2 is done with r1")
	default:
	}
	require.Nil(t, r2.End())
	<-r2.Done()
}
