package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/recording"
	"github.com/robotexec/robotexec/subscribers"
)

// clockEvery is the recording time between two clock messages of play
// -clock.
const clockEvery = 10 * time.Millisecond

func cmdPlay(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("play", "[flags] FILE", "Publish a recording's messages with their original timing, scaled by -rate.", stderr)
	cf := addClientFlags(fs)
	rate := fs.Float64("rate", 1, "speed factor: 2 plays twice as fast")
	loop := fs.Bool("loop", false, "play the recording again and again, until a signal")
	topics := fs.String("topics", "", "comma-separated topic filters: play only the messages they match")
	clock := fs.Bool("clock", false, "also publish the recording's time, {\"time\": RFC3339Nano}, on the clock topic, every 10 ms of recording time")
	clockTopic := fs.String("clock-topic", config.DefaultClockTopic, "the clock topic")
	qos := fs.Int("qos", 1, "QoS of the publications: 0, 1 or 2")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 || *rate <= 0 || *qos < 0 || *qos > 2 {
		fmt.Fprintln(stderr, "robotexec play: want one FILE, -rate above 0 and -qos 0, 1 or 2")
		fs.Usage()
		return ExitUsage
	}
	p := &player{rate: *rate, qos: byte(*qos), clockTopic: *clockTopic, clock: *clock}
	if *topics != "" {
		p.filters = strings.Split(*topics, ",")
	}
	for _, f := range p.filters {
		if err := subscribers.ValidateFilter(f); err != nil {
			fmt.Fprintln(stderr, "robotexec play: -topics:", err)
			return ExitUsage
		}
	}
	if err := subscribers.ValidateTopic(p.clockTopic); err != nil {
		fmt.Fprintln(stderr, "robotexec play: -clock-topic:", err)
		return ExitUsage
	}
	if _, err := recording.Scan(fs.Arg(0), func(recording.Message) error { return errStopScan }); err != nil && !errors.Is(err, errStopScan) {
		fmt.Fprintln(stderr, "robotexec play:", err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cf.dial(ctx, stderr, p.qos)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec play:", err)
		return exitFor(err)
	}
	defer c.Close()
	p.c = c
	for {
		err = p.play(ctx, fs.Arg(0))
		if err != nil || !*loop || ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(stderr, "robotexec play: %d messages published, %d failed\n", p.published, p.failed)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "robotexec play:", err)
		return ExitFailure
	}
	return ExitOK
}

// errStopScan ends a Scan early.
var errStopScan = errors.New("stop")

// player publishes a recording.
type player struct {
	c          *mqtt.Client
	rate       float64
	qos        byte
	filters    []string
	clock      bool
	clockTopic string

	start      time.Time // the wall time of the recording's first message
	first      time.Time // its log time
	nextClock  time.Time // the recording time of the next clock message
	pubs       map[string]*subscribers.Publisher
	published  int
	failed     int
	lastFailed error
}

// play plays the file once.
func (p *player) play(ctx context.Context, path string) error {
	p.start, p.first, p.nextClock = time.Time{}, time.Time{}, time.Time{}
	_, err := recording.Scan(path, func(m recording.Message) error {
		topic, at, data := m.Topic, m.At, m.Data
		if m.Role == recording.TimerCall {
			return nil // a run's own bookkeeping (see replay)
		}
		if !p.wanted(topic) {
			return nil
		}
		if p.start.IsZero() {
			p.start, p.first, p.nextClock = time.Now(), at, at
		}
		if err := p.clockUntil(ctx, at); err != nil {
			return err
		}
		if err := p.waitFor(ctx, at); err != nil {
			return err
		}
		// The payload is the scanner's until the callback returns.
		p.publish(ctx, topic, append([]byte(nil), data...))
		return nil
	})
	return err
}

func (p *player) wanted(topic string) bool {
	if len(p.filters) == 0 {
		return true
	}
	for _, f := range p.filters {
		if subscribers.Match(f, topic) {
			return true
		}
	}
	return false
}

// clockUntil publishes the clock messages due up to recording time at.
func (p *player) clockUntil(ctx context.Context, at time.Time) error {
	for p.clock && !p.nextClock.After(at) {
		if err := p.waitFor(ctx, p.nextClock); err != nil {
			return err
		}
		b, _ := json.Marshal(struct {
			Time string `json:"time"`
		}{p.nextClock.UTC().Format(time.RFC3339Nano)})
		p.publish(ctx, p.clockTopic, b)
		p.nextClock = p.nextClock.Add(clockEvery)
	}
	return nil
}

// waitFor waits until the wall time of recording time at: it sleeps, then
// spins the last 200 µs, which a sleep may overshoot.
func (p *player) waitFor(ctx context.Context, at time.Time) error {
	due := p.start.Add(time.Duration(float64(at.Sub(p.first)) / p.rate))
	if d := time.Until(due) - 200*time.Microsecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for time.Now().Before(due) {
	}
	return ctx.Err()
}

func (p *player) publish(ctx context.Context, topic string, payload []byte) {
	if p.pubs == nil {
		p.pubs = map[string]*subscribers.Publisher{}
	}
	pub := p.pubs[topic]
	if pub == nil {
		var err error
		if pub, err = p.c.Publisher(topic, bus.WithQoS(p.qos)); err != nil {
			p.failed++
			return
		}
		p.pubs[topic] = pub
	}
	if err := pub.Publish(ctx, payload); err != nil {
		p.failed++
		p.lastFailed = err
		return
	}
	p.published++
}
