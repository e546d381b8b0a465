package robotexec_test

// End-to-end test of memory bounded by config, not traffic: a flood of
// distinct topics through a bridge with max_rate and a watchdog.

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"
)

// floodTopics is the number of distinct topics of TestDistinctTopics:
// ROBOTEXEC_TOPICS, or 20,000 (the 200,000 takes a minute).
func floodTopics(t *testing.T) int {
	if s := os.Getenv("ROBOTEXEC_TOPICS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ROBOTEXEC_TOPICS")
		return n
	}
	return 20000
}

// TestDistinctTopics: N distinct topics through a bridge with max_rate and
// a watchdog on the same topics, both with max_topics 1,000: the RSS grows
// by less than 20 MiB (with gc_headroom 0, so that the garbage the heap
// may gather does not hide what stays), /metrics stays within twice its size at 10 topics,
// the evictions are counted, and the watchdog's log stays at about a line
// a second per state.
func TestDistinctTopics(t *testing.T) {
	t.Parallel()
	n := floodTopics(t)
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true, executor: ", overflow: block, queue_depth: 100, gc_headroom: 0", nodes: "" +
		"  - { name: relay, type: bridge, params: { from: 'in/#', to: 'out/#', max_rate: 1, max_topics: 1000 } }\n" +
		"  - { name: wd, type: watchdog, params: { watch: 'in/#', timeout: 200ms, alarm: alarms, max_topics: 1000 } }\n"})
	c := paho.NewClient(paho.NewClientOptions().AddBroker(r.url).SetClientID("flood-" + t.Name()).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	defer c.Disconnect(100)
	flood := func(from, to int) {
		var last paho.Token
		for i := from; i < to; i++ {
			last = c.Publish(fmt.Sprintf("in/topic/%d", i), 1, false, `{"v":1}`)
			if i%500 == 499 {
				require.True(t, last.WaitTimeout(traffic) && last.Error() == nil, "publish: %v", last.Error())
			}
		}
		require.True(t, last.WaitTimeout(traffic) && last.Error() == nil)
	}
	count := regexp.MustCompile(`(?m)^robotexec_callback_duration_seconds_count\{callback="watch",node="wd"\} (\d+)$`)
	handled := func(want int) {
		deadline := time.Now().Add(2 * traffic)
		for {
			_, body := getURL(t, r.metrics)
			m := count.FindStringSubmatch(body)
			require.NotNil(t, m, "%s", body)
			if v, _ := strconv.Atoi(m[1]); v >= want {
				return
			}
			require.True(t, time.Now().Before(deadline), "the watchdog handled %s of %d messages: %s", m[1], want, body)
			time.Sleep(50 * time.Millisecond)
		}
	}

	flood(0, 10)
	handled(10)
	time.Sleep(300 * time.Millisecond) // the 10 fall stale: every series exists
	_, small := getURL(t, r.metrics)
	rss0 := rssOf(t, r.cmd.Process.Pid)
	start := time.Now()
	flood(10, n)
	handled(n)
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	rss1 := rssOf(t, r.cmd.Process.Pid)
	_, big := getURL(t, r.metrics)

	t.Logf("%d topics in %v: RSS %d -> %d MiB (+%d MiB); /metrics %d -> %d bytes (x%.2f)",
		n, took.Round(time.Millisecond), rss0>>20, rss1>>20, (rss1-rss0)>>20, len(small), len(big), float64(len(big))/float64(len(small)))
	require.Less(t, rss1-rss0, int64(20<<20), "RSS growth")
	require.LessOrEqual(t, len(big), 2*len(small), "/metrics size")
	evicted := regexp.MustCompile(`robotexec_messages_dropped_total\{callback="(bridge|watch)",node="(relay|wd)",reason="evicted"\} (\d+)`).FindAllStringSubmatch(big, -1)
	require.Len(t, evicted, 2, "%s", big)
	for _, m := range evicted {
		v, _ := strconv.Atoi(m[3])
		require.GreaterOrEqual(t, v, n-1000, "evictions of %s", m[1])
	}
	logLines := 0
	for _, l := range r.stderr.all() {
		if strings.Contains(l, "watchdog: stale") || strings.Contains(l, "watchdog: ok") {
			logLines++
		}
	}
	require.LessOrEqual(t, logLines, 2*(int(took.Seconds())+3), "watchdog log lines")
}

// rssOf returns the resident set size of process pid, in bytes.
func rssOf(t *testing.T, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB$`).FindSubmatch(data)
	require.NotNil(t, m)
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	require.NoError(t, err)
	return kb << 10
}
