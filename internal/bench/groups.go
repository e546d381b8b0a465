package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// The groups of metrics: each measures robotexec's workloads beside their
// baselines, s.cfg.Repeat times, and returns its rows.

func one(x float64) []float64 { return []float64{x} }

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func (s *suite) throughput() ([]Metric, error) {
	w, d := s.cfg.Workers, s.cfg.slice("throughput")
	// Warm-up runs, not recorded: the first run of a process pays for
	// faulting its memory in.
	warm := min(d, 100*time.Millisecond)
	if _, err := DispatchExecutor(w, warm); err != nil {
		return nil, err
	}
	DispatchChanPool(w, warm)
	// robotexec's side runs twice per repetition, handing messages to the
	// subscriptions directly (the headline, as the pool's producer hands
	// closures to its channel) and through the in-process router; each run
	// is d/2, so that the side takes as long as the baseline's.
	var trips []float64
	as, bs, err := s.pairs(func() ([]float64, error) {
		if rt, ok := LineRoundTrip(); ok {
			trips = append(trips, float64(rt))
		}
		r, err := DispatchExecutor(w, d/2)
		if err != nil {
			return nil, err
		}
		rb, err := DispatchExecutorBus(w, d/2)
		return []float64{r.PerSecond(), rb.PerSecond()}, err
	}, func() ([]float64, error) {
		return one(DispatchChanPool(w, d).PerSecond()), nil
	})
	if err != nil {
		return nil, err
	}
	m := NewMetric(specThroughput, as[0], bs[0])
	m.Note = fmt.Sprintf("empty callbacks; %d subscriptions (depth 256, block) fed directly (Subscription.Deliver) vs %d goroutines on one chan func() of capacity %d; one producer; timed until drained.", 4*w, w, ChanCapacity)
	bus := NewMetric(specThroughBus, as[1], bs[0])
	bus.Note = "the same, publishing through the in-process router (topic routing and a time stamp per message)."
	if len(trips) > 0 {
		f := NewFigure("a cache line's round trip between two threads", "ns", trips)
		m.Figures, bus.Figures = []Figure{f}, []Figure{f}
		m.Note += fmt.Sprintf(" A cache line's round trip between two threads, beside each repetition: %s ns (robotexec passes a few cache lines between the CPUs at each message, the chan pool about one: the ratios fall as the trip grows, BENCHMARKS.md).", numberList(trips))
	}
	return []Metric{m, bus}, nil
}

func (s *suite) latency() ([]Metric, error) {
	w, d := s.cfg.Workers, s.cfg.slice("latency")
	rate, exCap, poolCap, err := LatencyLoad(w, max(min(d/2, 100*time.Millisecond), 20*time.Millisecond))
	if err != nil {
		return nil, err
	}
	var achieved [2][]float64
	as, bs, err := s.pairs(func() ([]float64, error) {
		l, err := LatencyExecutor(w, rate, d)
		achieved[0] = append(achieved[0], l.Rate)
		return []float64{micros(l.P50), micros(l.P99), micros(l.P999)}, err
	}, func() ([]float64, error) {
		l := LatencyChanPool(w, rate, d)
		achieved[1] = append(achieved[1], l.Rate)
		return []float64{micros(l.P50), micros(l.P99), micros(l.P999)}, nil
	})
	if err != nil {
		return nil, err
	}
	ms := []Metric{NewMetric(specLatP50, as[0], bs[0]), NewMetric(specLatP99, as[1], bs[1]), NewMetric(specLatP999, as[2], bs[2])}
	ms[1].Note = fmt.Sprintf("trigger (Subscription.Deliver, channel send) to callback start at %s events/s offered to both: half what the slower sustains with this producer unpaced (robotexec %s, chan pool %s, measured in this run); achieved %s vs %s events/s; the producer paces on the monotonic clock, yielding (runtime.Gosched) while it waits.",
		FormatNumber(rate), FormatNumber(exCap), FormatNumber(poolCap), FormatNumber(Median(achieved[0])), FormatNumber(Median(achieved[1])))
	return ms, nil
}

func (s *suite) cost() ([]Metric, error) {
	w, d := s.cfg.Workers, s.cfg.slice("cost")
	few, err := newCostRig(w, 10)
	if err != nil {
		return nil, err
	}
	defer few.close()
	many, err := newCostRig(w, s.cfg.IdleEntities)
	if err != nil {
		return nil, err
	}
	defer many.close()
	// Warm both up, and size the rounds to last about d: the first
	// rounds pay for starting the workers, the next one tells the cost.
	const warm = 20_000
	many.round(warm)
	per := few.round(warm) / warm
	calib := max(int(50*time.Millisecond/max(per, 1)), warm)
	per = few.round(calib) / time.Duration(calib)
	n := max(int(d/max(per, 1)), 1000)
	as, bs, err := s.pairs(func() ([]float64, error) {
		return one(float64(many.round(n)) / float64(n)), nil
	}, func() ([]float64, error) {
		return one(float64(few.round(n)) / float64(n)), nil
	})
	if err != nil {
		return nil, err
	}
	m := NewMetric(specCost, as[0], bs[0])
	m.Note = fmt.Sprintf("ns per event through one busy subscription with %d idle subscriptions registered (robotexec column) vs 10 (baseline column); rounds of %d events.", s.cfg.IdleEntities, n)
	return []Metric{m}, nil
}

// defaultClock is the timer source of robotexec run's default config
// (executor.timer_source: precise, where supported), and its name.
func defaultClock() (timers.Clock, string) {
	if timers.PreciseSupported() {
		return timers.Precise{}, "the precise timer source (robotexec run's default: a timerfd in the poller, GOMAXPROCS raised to workers+1 during its runs)"
	}
	return timers.System{}, "Go's timers (robotexec run's default here: no precise timer source)"
}

func (s *suite) timers() ([]Metric, error) {
	w, d, n, p := s.cfg.Workers, s.cfg.slice("timers"), s.cfg.Timers, s.cfg.TimerPeriod
	clock, clockName := defaultClock()
	var p50, cpu [3][]float64
	var missed, calls [2]uint64
	// robotexec's side runs twice per repetition, on the default timer
	// source (the headline) and on Go's timers, d/2 each.
	as, bs, err := s.pairs(func() ([]float64, error) {
		var p99 []float64
		for i, c := range []timers.Clock{clock, timers.System{}} {
			l, err := TimerLatenessExecutor(c, w, n, p, d/2)
			if err != nil {
				return nil, err
			}
			p50[i] = append(p50[i], micros(l.P50))
			cpu[i] = append(cpu[i], l.CPU)
			missed[i] += l.Missed
			calls[i] += l.Calls
			p99 = append(p99, micros(l.P99))
		}
		return p99, nil
	}, func() ([]float64, error) {
		l := TimerLatenessAfterFunc(n, p, d)
		p50[2] = append(p50[2], micros(l.P50))
		cpu[2] = append(cpu[2], l.CPU)
		return one(micros(l.P99)), nil
	})
	if err != nil {
		return nil, err
	}
	skipped := func(i int) string {
		return fmt.Sprintf("it skipped %d deadlines (%.2f%%) that the baseline served late", missed[i], 100*float64(missed[i])/float64(max(calls[i]+missed[i], 1)))
	}
	m := NewMetric(specTimer, as[0], bs[0])
	m.Note = fmt.Sprintf("%d timers every %v, started together, callback start minus deadline; executor (%d workers, one reentrant group) on %s vs time.AfterFunc re-armed on absolute deadlines; p50 %s vs %s us; cpu %s vs %s of one core (the process's, while the deadlines were recorded); %s.",
		n, p, w, clockName, FormatNumber(Median(p50[0])), FormatNumber(Median(p50[2])), cpuPercent(cpu[0]), cpuPercent(cpu[2]), skipped(0))
	goTimers := NewMetric(specTimerGo, as[1], bs[0])
	goTimers.Note = fmt.Sprintf("the same, the executor on Go's timers (executor.timer_source: go; executor.New's default); p50 %s us; cpu %s; %s.",
		FormatNumber(Median(p50[1])), cpuPercent(cpu[1]), skipped(1))
	return []Metric{m, goTimers}, nil
}

// cpuPercent formats the median of CPU percentages, "unknown" where one
// could not be read.
func cpuPercent(xs []float64) string {
	if len(xs) == 0 || slices.Min(xs) < 0 {
		return "unknown"
	}
	return FormatNumber(Median(xs)) + "%"
}

func (s *suite) pipeline() ([]Metric, error) {
	// Five runs a repetition (the executor, the channel chain, the broker
	// hop, and the pipeline via mosquitto both ways) in the time of two
	// slices, so that the group keeps its share.
	w, d := s.cfg.Workers, s.cfg.slice("pipeline")*2/5
	as, bs, err := s.pairs(func() ([]float64, error) {
		l, err := PipelineExecutor(w, d)
		return []float64{micros(l.P50), micros(l.P99)}, err
	}, func() ([]float64, error) {
		c := PipelineChanChain(d)
		h, err := BrokerHop(w, d)
		return []float64{micros(c.P50), micros(c.P99), micros(h.P50)}, err
	})
	if err != nil {
		return nil, err
	}
	ms := []Metric{NewMetric(specPipeP50, as[0], bs[0]), NewMetric(specPipeP99, as[1], bs[1]), NewMetric(specPipeHop, as[0], bs[2])}
	ms[0].Note = fmt.Sprintf("a timer publishing every %v through %d stages to a sink, each an executor owner publishing through the MQTT client's router (embedded broker, in-process, as nodes do: no other client subscribes, so no hop goes to the broker; executor of %d workers), source publication to sink callback start, vs a ticker goroutine sending through %d goroutines linked by channels to a sink goroutine.",
		PipelinePeriod, PipelineStages, w, PipelineStages)
	ms[2].Note = "the pipeline's p50 vs one hop through the embedded broker between two MQTT clients with executors of their own, as between two robotexec processes, at the same rate."
	return append(ms, s.pipelineMosquitto(d)), nil
}

// pipelineMosquitto measures the pipeline through mosquitto, in-process
// (in_process true) against every hop through the broker, or says why it
// could not.
func (s *suite) pipelineMosquitto(d time.Duration) Metric {
	var as, bs [][]float64
	err := withMosquitto(func(url string) error {
		run := func(inProcess bool) func() ([]float64, error) {
			return func() ([]float64, error) {
				c, err := PipelineViaBroker(url, s.cfg.Workers, inProcess, d)
				return []float64{c.CPUPerMessage(), c.BrokerSentPerMessage(), float64(c.Messages)}, err
			}
		}
		var err error
		as, bs, err = s.pairs(run(true), run(false))
		return err
	})
	if err != nil {
		return failedOrNotMeasured(specPipeMosq, err)
	}
	m := NewMetric(specPipeMosq, as[0], bs[0])
	m.Figures = []Figure{
		NewFigure("broker sent per msg, in_process true", "msgs", as[1]),
		NewFigure("broker sent per msg, in_process false", "msgs", bs[1]),
	}
	m.Note = fmt.Sprintf("a timer every %v through %d stages to a sink, each an executor owner (%d workers) publishing through the router of one MQTT client (QoS 1, clean session) of mosquitto, in-process (in_process true, robotexec run's default) vs every hop through the broker (in_process false); an outside subscriber (a raw paho client) on the last topic; the process's CPU time per pipeline message, the outside subscriber's included; %s pipeline messages a round, each received exactly once by the sink and by the outside subscriber (checked); the broker sent the pipeline's client %s vs %s messages per pipeline message (Stats().Received); %s.",
		PipelinePeriod, PipelineStages, s.cfg.Workers, FormatNumber(Median(as[2])), FormatNumber(m.Figures[0].Value), FormatNumber(m.Figures[1].Value), mosquittoVersion())
	return m
}

func (s *suite) memory() ([]Metric, error) {
	w, n, events := s.cfg.Workers, s.cfg.MemoryCount, s.cfg.AllocEvents
	allocs, allocsBase, err := s.pairs(func() ([]float64, error) {
		x, err := AllocsExecutor(w, events)
		return one(x), err
	}, func() ([]float64, error) {
		return one(AllocsChanPool(w, events)), nil
	})
	if err != nil {
		return nil, err
	}
	subs, chans, err := s.pairs(func() ([]float64, error) {
		x, err := SubscriptionBytes(n)
		return one(x), err
	}, func() ([]float64, error) {
		return one(ChannelBytes(n)), nil
	})
	if err != nil {
		return nil, err
	}
	tms, afs, err := s.pairs(func() ([]float64, error) {
		x, err := TimerBytes(n)
		return one(x), err
	}, func() ([]float64, error) {
		return one(AfterFuncBytes(n)), nil
	})
	if err != nil {
		return nil, err
	}
	ms := []Metric{
		NewMetric(specAllocs, allocs[0], allocsBase[0]),
		NewMetric(specSubBytes, subs[0], chans[0]),
		NewMetric(specTimerBytes, tms[0], afs[0]),
	}
	ms[0].Note = fmt.Sprintf("heap allocations (MemStats.Mallocs) per callback over %d events of the dispatch workload, in steady state: each run's context (8 bytes; a run serves up to %d messages of a busy subscription).", events, executor.DefaultBatch)
	ms[1].Note = fmt.Sprintf("live heap after GC per subscription, over %d (in-process router, default depth %d) vs a chan Message of that capacity.", n, subscribers.DefaultDepth)
	ms[2].Note = fmt.Sprintf("live heap after GC per armed periodic timer, over %d executor timers vs time.AfterFunc timers.", n)
	return ms, nil
}
