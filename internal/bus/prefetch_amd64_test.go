package bus

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHasPrefetchW checks the CPUID test against the flags Linux lists
// for the CPU: 3dnowprefetch is PREFETCHW.
func TestHasPrefetchW(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/cpuinfo")
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		if strings.TrimSpace(name) == "flags" {
			want := slices.Contains(strings.Fields(value), "3dnowprefetch")
			require.Equal(t, want, hasPrefetchW())
			require.Equal(t, want, canPrefetch)
			return
		}
	}
	t.Fatal("/proc/cpuinfo lists no flags")
}
