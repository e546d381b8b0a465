package cli

// Tests of record, from the embedded broker of a robotexec instance, and
// of info, on what record wrote, on a stored run and on damaged files.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
)

// infoOut is info -json's output.
type infoOut struct {
	File      string     `json:"file"`
	Complete  bool       `json:"complete"`
	Damage    string     `json:"damage"`
	Messages  int        `json:"messages"`
	Start     *time.Time `json:"start"`
	End       *time.Time `json:"end"`
	DurationS float64    `json:"duration_s"`
	Topics    []struct {
		Topic, Role, Node, Encoding string
		Messages                    int
		RateHz                      float64 `json:"rate_hz"`
		First, Last                 time.Time
	} `json:"topics"`
}

// infoJSONOf runs info -json on path.
func infoJSONOf(t *testing.T, path string) infoOut {
	t.Helper()
	r := cli(t, "info", "-json", path)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stderr)
	var out infoOut
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&out), "%s", r)
	return out
}

// TestRecord: record -duration records the JSON and raw messages matching
// its filters, says how many, and info reads them back by topic and
// encoding.
func TestRecord(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-record", "  - { name: beat, type: heartbeat, params: { topic: rec/beat, period: 10ms } }\n")
	pub := pahoClient(t, a.url, "cli-record-raw")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // raw payloads on a second filter while record runs
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				pub.Publish("raw/x", 1, false, "raw\x00bytes").Wait()
			}
		}
	}()
	path := filepath.Join(t.TempDir(), "rec.mcap")
	start := time.Now()
	r := startCLI("record", "-broker", a.url, "-o", path, "-duration", "1s", "rec/#", "raw/+").wait(t, traffic)
	end := time.Now()
	close(stop)
	wg.Wait()
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stdout)
	require.GreaterOrEqual(t, time.Since(start), time.Second, "-duration")
	m := regexp.MustCompile(`^robotexec record: (\d+) messages recorded to ` + regexp.QuoteMeta(path) + `, 0 dropped\n$`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "%s", r)
	n, _ := strconv.Atoi(m[1])

	in := infoJSONOf(t, path)
	require.True(t, in.Complete)
	require.Equal(t, n, in.Messages)
	byTopic := map[string]string{}
	for _, tp := range in.Topics {
		byTopic[tp.Topic] = fmt.Sprintf("%s %s", tp.Encoding, tp.Role)
		require.Positive(t, tp.Messages, tp.Topic)
		require.False(t, tp.First.Before(start) || tp.Last.After(end), "%s: %v..%v, outside the recording", tp.Topic, tp.First, tp.Last)
	}
	require.Equal(t, map[string]string{"rec/beat": "json ", "raw/x": "application/octet-stream "}, byTopic)
	require.NotNil(t, in.Start)
	require.Positive(t, in.DurationS)

	text := cli(t, "info", path)
	require.Equal(t, ExitOK, text.code, "%s", text)
	require.Regexp(t, `(?m)^file: +`+regexp.QuoteMeta(path)+`$`, text.stdout)
	require.Regexp(t, fmt.Sprintf(`(?m)^messages: +%d$`, n), text.stdout)
	require.Regexp(t, `(?m)^TOPIC +ENCODING +MESSAGES +RATE \(Hz\) +FIRST +LAST$`, text.stdout)
	require.Regexp(t, `(?m)^rec/beat +json +\d+ +\d+\.\d\d +\S+Z +\S+Z$`, text.stdout)
	require.NotContains(t, text.stdout, "complete:")
}

// TestRecordDefaultFile: without -o, record writes
// robotexec-<UTC time>.mcap in the working directory. It changes
// directory, so it is not parallel.
func TestRecordDefaultFile(t *testing.T) {
	a := startApp(t, "cli-record-default", "  - { name: beat, type: heartbeat, params: { topic: rec/beat, period: 1h } }\n")
	dir := t.TempDir()
	t.Chdir(dir)
	r := startCLI("record", "-broker", a.url, "-duration", "200ms", "nothing/#").wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `^robotexec record: 0 messages recorded to robotexec-\d{8}T\d{6}Z\.mcap, 0 dropped\n$`, r.stderr)
	files, err := filepath.Glob(filepath.Join(dir, "robotexec-*.mcap"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Equal(t, 0, infoJSONOf(t, files[0]).Messages)
}

func TestRecordErrors(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-record-errors", "  - { name: beat, type: heartbeat, params: { topic: rec/beat, period: 1h } }\n")
	dir := t.TempDir()
	usage := "robotexec record: want one or more topic filters, -qos 0, 1 or 2 and -duration zero or more"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no filter", nil, ExitUsage, usage},
		{"-qos 3", []string{"-qos", "3", "a/#"}, ExitUsage, usage},
		{"negative -duration", []string{"-duration", "-1s", "a/#"}, ExitUsage, usage},
		{"bad filter", []string{"a/#", "b/#/c"}, ExitUsage, `robotexec record: subscribers: topic filter "b/#/c": '#' must be the last level`},
		{"no broker", []string{"-broker", unreachable(t), "-timeout", refusedWait, "a/#"}, ExitFailure, "connection refused"},
		{"-o in no directory", []string{"-broker", a.url, "-o", filepath.Join(dir, "none", "x.mcap"), "a/#"}, ExitFailure, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, append([]string{"record", "-o", filepath.Join(dir, tc.name+".mcap")}, tc.args...)...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

// TestInfoRoles: a run's recording names each channel's role and node.
func TestInfoRoles(t *testing.T) {
	t.Parallel()
	r := cli(t, "info", storedRun)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `(?m)^robot/imu0/filtered \(output of imu_filter\) +json +49 +10\.00 `, r.stdout)
	require.Regexp(t, `(?m)^timer\(100ms\) \(timer of imu_filter\) +json +49 `, r.stdout)

	path := filepath.Join(t.TempDir(), "roles.mcap")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rec, err := recording.Create(path, recording.Options{})
	require.NoError(t, err)
	require.True(t, rec.RecordAs(recording.Input, "", "ext/in", []byte(`{"v":1}`), t0))
	require.True(t, rec.RecordAs(recording.Output, "relay", "ext/out", []byte(`{"v":1}`), t0.Add(time.Second)))
	_, err = rec.Close()
	require.NoError(t, err)
	r = cli(t, "info", path)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `(?m)^ext/in \(input\) +json +1 +0\.00 +2025-06-01T12:00:00Z +2025-06-01T12:00:00Z$`, r.stdout)
	require.Regexp(t, `(?m)^ext/out \(output of relay\) +json +1 `, r.stdout)
	require.Regexp(t, `(?m)^duration: +1s$`, r.stdout)
}

// TestInfoEmptyAndDamaged: an empty recording has no times and no
// topics; a recording cut short is read up to its last complete chunk and
// said to be incomplete.
func TestInfoEmptyAndDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.mcap")
	rec, err := recording.Create(empty, recording.Options{})
	require.NoError(t, err)
	_, err = rec.Close()
	require.NoError(t, err)
	r := cli(t, "info", empty)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `(?m)^messages: +0\nstart: +-\nend: +-\nduration: +0s\n$`, r.stdout)
	require.NotContains(t, r.stdout, "TOPIC")
	in := infoJSONOf(t, empty)
	require.True(t, in.Complete)
	require.Nil(t, in.Start)
	require.Empty(t, in.Topics)

	data, err := os.ReadFile(storedRun)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.mcap")
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	r = cli(t, "info", cut)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `(?m)^complete: +no \(.+\): what follows is what its complete chunks hold$`, r.stdout)
	in = infoJSONOf(t, cut)
	require.False(t, in.Complete)
	require.NotEmpty(t, in.Damage)
	require.Positive(t, in.Messages)
	require.Less(t, in.Messages, 2351, "fewer than the whole run")
}

func TestInfoErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notMCAP := filepath.Join(dir, "x.mcap")
	writeFile(t, notMCAP, "nodes: []\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "robotexec info: want one FILE\nUsage: robotexec info"},
		{"two files", []string{notMCAP, notMCAP}, "robotexec info: want one FILE"},
		{"not MCAP", []string{notMCAP}, "robotexec info: " + notMCAP},
		{"missing", []string{notMCAP + ".none"}, "no such file or directory"},
	} {
		r := cli(t, append([]string{"info"}, tc.args...)...)
		require.Equal(t, ExitUsage, r.code, "%s: %s", tc.name, r)
		require.Empty(t, r.stdout, tc.name)
		require.Contains(t, r.stderr, tc.want, tc.name)
	}
}
