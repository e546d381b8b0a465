package syncbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/syncbuf"
)

// Writes from many goroutines at once (run under -race) each stay whole.
func TestConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "writer %d\n", i)
			}
		}()
	}
	wg.Wait()
	require.Len(t, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"), 800)
	for i := range 8 {
		require.Equal(t, 100, strings.Count(b.String(), fmt.Sprintf("writer %d\n", i)))
	}
}
