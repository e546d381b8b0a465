package mcapjs_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mcapjs"
	"github.com/robotexec/robotexec/internal/recording"
)

// TestRead: the reference reader reads back a recording of three messages
// made by package recording.
func TestRead(t *testing.T) {
	dir, err := filepath.Abs("../recording/testdata/mcapjs")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "three.mcap")
	rec, err := recording.Create(path, recording.Options{})
	require.NoError(t, err)
	at := time.Unix(1700000000, 0)
	for i := range 3 {
		require.True(t, rec.RecordAs(recording.Input, "", "robot/imu", []byte(`{"i":1}`), at.Add(time.Duration(i)*time.Millisecond)))
	}
	_, err = rec.Close()
	require.NoError(t, err)

	var got struct {
		MessageCount int `json:"messageCount"`
		Channels     []struct {
			Topic string `json:"topic"`
		} `json:"channels"`
	}
	mcapjs.Read(t, mcapjs.Node(t, dir), dir, "read.mjs", path, &got)
	require.Equal(t, 3, got.MessageCount)
	require.Len(t, got.Channels, 1)
	require.Equal(t, "robot/imu", got.Channels[0].Topic)
}
