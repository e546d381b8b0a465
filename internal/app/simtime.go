package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// clockMessage is a message of the clock topic.
type clockMessage struct {
	Time string `json:"time"`
}

// parseClock returns the time of a clock message.
func parseClock(payload []byte) (time.Time, error) {
	var m clockMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		return time.Time{}, fmt.Errorf("clock message %q: %w", payload, err)
	}
	t, err := time.Parse(time.RFC3339Nano, m.Time)
	if err != nil {
		return time.Time{}, fmt.Errorf("clock message %q: time: %w", payload, err)
	}
	return t, nil
}

// firstClock waits for the first valid message of the clock topic, on a
// client of its own (mc with another client ID and a clean session) and a
// small executor: the process's client holds its messages until the
// nodes have subscribed.
func firstClock(ctx context.Context, mc mqtt.Config, topic string, logger *slog.Logger) (time.Time, error) {
	mc.ClientID += "-clock"
	mc.CleanSession, mc.StatusTopic, mc.StartPaused = true, "-", false
	mc.InProcess, mc.Audience = false, nil
	c, err := mqtt.Dial(mc)
	if err != nil {
		return time.Time{}, err
	}
	defer c.Close()
	logger.Info("use_sim_time: waiting for the clock topic", "topic", topic)
	first := make(chan time.Time, 1)
	bad := ratelog.New(10 * time.Second)
	ex := executor.New(executor.Options{Workers: 1, Logger: logger})
	_, err = ex.NewOwner("clock", nil).Subscribe(c, topic, func(ctx context.Context, m subscribers.Message) {
		t, err := parseClock(m.Payload)
		if err != nil {
			bad.Log(logger, slog.LevelWarn, "use_sim_time: ignored", "error", err)
			return
		}
		select {
		case first <- t:
		default:
		}
	}, executor.Depth(1))
	if err != nil {
		return time.Time{}, err
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { ex.Run(runCtx); close(ran) }()
	defer func() { stop(); <-ran }()
	select {
	case t := <-first:
		return t, nil
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("use_sim_time: no clock message on %q: %w", topic, ctx.Err())
	}
}

// simClock steps the executor's simulated clock with the clock topic.
type simClock struct {
	sim  *timers.Sim
	log  *slog.Logger
	bad  *ratelog.Limiter // the log of the messages that do not parse
	back *ratelog.Limiter // the log of the jumps back
	// view, when not nil, is told each new time (the time capability).
	// Set before the executor runs.
	view *view.Server
}

// follow subscribes to the clock topic on ex: each message moves the
// simulated time forward, firing the timers that fall due on the way, in
// deadline order (a timer more than a period late skips and counts the
// deadlines it missed). A message that does not parse is logged and
// ignored.
//
// A message that goes back in time, by any amount, sets the clock back, as
// ROS time jumps back when a playback starts over: the timers whose
// deadlines are more than a period ahead start again from the new time
// (timerq.RewindClock), and the nodes' clocks read it. Nothing tells a
// playback that starts over from messages out of order, and MQTT keeps one
// publisher's messages in order, so every step back is taken as a jump;
// a tiny one moves only the timers called within it, earlier by at most
// the step.
func (s *simClock) follow(ex *executor.Executor, src subscribers.Source, cfg *config.Config) error {
	_, err := ex.NewOwner("clock", nil).Subscribe(src, cfg.Executor.ClockTopic, func(ctx context.Context, m subscribers.Message) {
		t, err := parseClock(m.Payload)
		switch now := s.sim.Now(); {
		case err != nil:
			s.bad.Log(s.log, slog.LevelWarn, "use_sim_time: ignored", "error", err)
		case t.Before(now):
			s.back.Log(s.log, slog.LevelInfo, "use_sim_time: the clock went back: timers re-armed on the new time",
				"from", now.Format(time.RFC3339Nano), "to", t.Format(time.RFC3339Nano))
			s.sim.Rewind(t)
		default:
			s.sim.AdvanceTo(t)
		}
		if err == nil && s.view != nil {
			s.view.SetTime(s.sim.Now())
		}
	}, executor.Name("clock"), executor.Depth(1))
	return err
}

// newExecutor makes the app's executor, on the configured timer source,
// or, with use_sim_time, on a simulated clock that starts at the first
// clock message (waited for until ctx ends) and follows the clock topic.
func (a *App) newExecutor(ctx context.Context, mc mqtt.Config, logger *slog.Logger) error {
	cfg := a.cfg
	workers := a.obs.workers + a.obs.prioWorkers
	a.procsWas = setProcs(cfg, a.extra || a.rec != nil, logger)
	set := a.procsWas > 0
	if !set && (a.obs.prioWorkers > 0 || cfg.Executor.PinWorkers) && runtime.GOMAXPROCS(0) < workers {
		// Every worker has a processor, for the OS to choose which
		// threads run (executor.Options.PriorityWorkers), or each on its
		// CPU (PinWorkers).
		runtime.GOMAXPROCS(workers)
		logger.Debug("GOMAXPROCS raised to the workers, each on a thread of its own", "gomaxprocs", workers)
	}
	clock := timerClock(cfg, workers, !set, logger)
	var sc *simClock
	if cfg.Executor.UseSimTime {
		t0, err := firstClock(ctx, mc, cfg.Executor.ClockTopic, logger)
		if err != nil {
			return err
		}
		sc = &simClock{sim: timers.NewSim(t0), log: logger, bad: ratelog.New(10 * time.Second), back: ratelog.New(time.Second)}
		clock = sc.sim
	}
	a.ex = executor.New(a.obs.executorOptions(executor.Options{
		Workers:          a.obs.workers,
		PriorityWorkers:  a.obs.prioWorkers,
		Realtime:         cfg.Executor.Realtime,
		PinWorkers:       cfg.Executor.PinWorkers,
		ReserveForTimers: cfg.Executor.ReserveForTimers,
		Logger:           ratelog.LimitFloods(logger),
		Clock:            clock,
	}))
	if sc == nil {
		return nil
	}
	a.sim = sc
	return sc.follow(a.ex, a.client, cfg)
}
