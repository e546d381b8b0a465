package regopt_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/regopt"
)

type group struct{}

type values = regopt.Values[*group]

type option func(*values)

func TestApplyInOrderOverTheStart(t *testing.T) {
	block := bus.Block
	opts := []option{
		func(v *values) { v.Name = "first" },
		func(v *values) { v.Needs = append(v.Needs, "odom") },
		func(v *values) { v.Name = "second"; v.Overflow = &block },
	}
	got := regopt.Apply(values{Depth: 5, Needs: []string{"imu"}}, opts)
	require.Equal(t, "second", got.Name, "a later option wins")
	require.Equal(t, 5, got.Depth, "what no option sets is kept")
	require.Equal(t, []string{"imu", "odom"}, got.Needs)
	require.Equal(t, bus.Block, *got.Overflow)
	require.Equal(t, values{}, regopt.Apply[*group, option](values{}, nil))
}
