package waitset_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/waitset"
)

func TestList(t *testing.T) {
	newEntities := func(n int) []*waitset.Entity {
		kinds := make([]waitset.Kind, n)
		for i := range kinds {
			kinds[i] = S
		}
		return register(waitset.New(nil, nil), kinds...)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, es []*waitset.Entity)
	}{
		{"zero list is empty", func(t *testing.T, _ []*waitset.Entity) {
			var l waitset.List
			require.Zero(t, l.Len())
			require.Nil(t, l.Front())
			require.Nil(t, l.Pop())
			require.Zero(t, l.Len())
		}},
		{"push pop is FIFO", func(t *testing.T, es []*waitset.Entity) {
			var l waitset.List
			for i, e := range es {
				l.Push(e)
				require.Equal(t, i+1, l.Len())
				require.Same(t, es[0], l.Front())
			}
			for i, e := range es {
				require.Same(t, e, l.Front())
				require.Same(t, e, l.Pop())
				require.Equal(t, len(es)-i-1, l.Len())
			}
			require.Nil(t, l.Pop())
			require.Nil(t, l.Front())
		}},
		{"emptied list is reusable", func(t *testing.T, es []*waitset.Entity) {
			var l waitset.List
			l.Push(es[0])
			require.Same(t, es[0], l.Pop())
			l.Push(es[1])
			l.Push(es[0])
			require.Equal(t, []int{1, 0}, indexes(&l))
		}},
		{"an entity moves between lists", func(t *testing.T, es []*waitset.Entity) {
			var a, b waitset.List
			a.Push(es[0])
			a.Push(es[1])
			b.Push(a.Pop())
			b.Push(es[2])
			require.Equal(t, []int{1}, indexes(&a))
			require.Equal(t, []int{0, 2}, indexes(&b))
		}},
		{"append moves everything", func(t *testing.T, es []*waitset.Entity) {
			var a, b waitset.List
			a.Push(es[0])
			a.Push(es[1])
			b.Push(es[2])
			b.Push(es[3])
			a.Append(&b)
			require.Zero(t, b.Len())
			require.Nil(t, b.Front())
			require.Nil(t, b.Pop())
			require.Equal(t, 4, a.Len())
			a.Push(es[4])
			require.Equal(t, []int{0, 1, 2, 3, 4}, indexes(&a))
		}},
		{"append into empty", func(t *testing.T, es []*waitset.Entity) {
			var a, b waitset.List
			b.Push(es[3])
			b.Push(es[1])
			a.Append(&b)
			require.Zero(t, b.Len())
			require.Equal(t, 2, a.Len())
			require.Same(t, es[3], a.Front())
			a.Push(es[0])
			require.Equal(t, []int{3, 1, 0}, indexes(&a))
		}},
		{"append empty", func(t *testing.T, es []*waitset.Entity) {
			var a, b waitset.List
			a.Append(&b)
			require.Zero(t, a.Len())
			a.Push(es[0])
			a.Append(&b)
			require.Equal(t, 1, a.Len())
			require.Equal(t, []int{0}, indexes(&a))
		}},
		{"append after pops", func(t *testing.T, es []*waitset.Entity) {
			var a, b waitset.List
			for _, e := range es {
				b.Push(e)
			}
			b.Pop()
			b.Pop()
			a.Push(es[0])
			a.Append(&b)
			b.Push(es[1])
			a.Append(&b)
			require.Equal(t, []int{0, 2, 3, 4, 1}, indexes(&a))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newEntities(5))
		})
	}
}
