package timerq

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// sortSlots orders slots as comparing (deadline, ID) does, on the packed
// path and on the fallback, whatever the spreads.
func TestSortSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var q Queue
	for round := range 2000 {
		n := 1 + rng.IntN(300)
		var dueSpread, idSpread uint64
		switch round % 4 {
		case 0: // one deadline, as on a grid
			dueSpread, idSpread = 1, 1<<12
		case 1:
			dueSpread, idSpread = 1<<20, 1<<20
		case 2: // too wide to pack: the fallback
			dueSpread, idSpread = math.MaxInt64, math.MaxUint64
		default:
			dueSpread, idSpread = 1<<40, 1<<30
		}
		base := rng.Int64N(1 << 40)
		ds := make([]slot, n)
		seen := map[uint64]bool{}
		for i := range ds {
			id := 1 + rng.Uint64N(idSpread)
			for seen[id] {
				id = 1 + rng.Uint64N(idSpread)
			}
			seen[id] = true
			ds[i] = slot{due: base + int64(rng.Uint64N(dueSpread)>>1), id: id, num: int32(i)}
		}
		want := slices.Clone(ds)
		slices.SortFunc(want, func(a, b slot) int {
			if c := cmp.Compare(a.due, b.due); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		q.sortSlots(ds)
		require.Equal(t, want, ds, "round %d", round)
	}
}
