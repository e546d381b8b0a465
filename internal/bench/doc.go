// Package bench is robotexec's benchmark suite as a library: the workloads
// of `robotexec bench`, each beside its baseline, the repetitions, and the
// statistics and rendering of the results.
//
// Every metric is measured in the same run as its baseline: the two
// workloads alternate within each repetition (in alternating order, so that
// neither always runs on a warmer or a colder machine), the median of the
// repetitions is quoted and their spread shown. A ratio is robotexec's
// median over the baseline's; its spread is that of the ratios of the
// repetitions' pairs. The metrics, their baselines and their targets are
// those of issue 6 (see BENCHMARKS.md):
//
//   - dispatch throughput: empty callbacks per second through the
//     executor (4·W subscriptions on an in-process router, Block policy, depth
//     256, one producer), versus W goroutines calling the func() values of
//     one shared channel of capacity 1024. Target ratio ≥ 0.5.
//   - dispatch latency p50, p99, p99.9: trigger to callback start, at half
//     the rate the slower of the two sustains with the metric's producer
//     (LatencyLoad), offered identically to both. Target ratio of the p99s
//     ≤ 2.0.
//   - per-event cost 100k vs 10 ents: the cost of one event through one busy
//     subscription with 100,000 idle subscriptions registered, over the
//     same with 10. Target ≤ 1.2.
//   - timer lateness p99: 1,000 timers at 100 Hz through the executor versus
//     1,000 time.AfterFunc timers re-armed on absolute deadlines. Target
//     ratio ≤ 1.5.
//   - mqtt bridge msgs/s: QoS 1 messages through the embedded broker and the
//     bridge node, versus the faster of two raw forwarders measured in the
//     same repetitions, paho.mqtt.golang's (MQTT 3.1.1) and paho.golang's
//     (MQTT 5.0). Target ratio ≥ 0.8; via mosquitto (docs/mqtt.md's
//     settings, max_inflight_messages 1000 among them), ≥ 0.9.
//   - run (processes as users start them, with Config.Executable): mqtt
//     bridge under run via mosquitto, `robotexec run` of a bridge-only
//     config beside a raw paho.mqtt.golang forwarder process through a
//     mosquitto with max_inflight_messages 100 and persistence, fed 20,000
//     QoS 1 messages as fast as a producer publishes them: throughput
//     (target ratio ≥ 1.0), paced p99 (≤ 1.1) and RSS after the burst
//     (≤ 2); and timer lateness under run, 1,000 timers at 100 Hz in a
//     node of a run (p99 target ≤ 200 µs, no missed deadline).
//   - idle cpu: a `robotexec run` process with 1,000 bridges and 100
//     heartbeats at 1 Hz on its embedded broker, its CPU over up to 10 s
//     (target ≤ 0.36% of a core), beside a raw paho client process.
//   - pipeline 5 hops via mosquitto: the process's CPU time per message of
//     a 5-stage pipeline on one MQTT client of mosquitto, in-process
//     (in_process true), versus every hop through the broker, with the
//     messages the broker sent the client per pipeline message beside it;
//     an outside subscriber on the last topic must get every message once.
//   - view forwarding: the CPU time the live view adds per frame that one
//     of two in-process viewers reads, with 10 JSON topics at 1 kHz each,
//     versus robotexec echo's way per line printed (target ratio ≤ 1.0);
//     and the arrival-to-frame p99 (target ≤ 1 ms).
//   - mqtt bridge via a 2-node cluster: the bridge through two nodes of a
//     cluster of Debian's ejabberd, the producer on one node, robotexec,
//     the raw forwarders and the consumer on the other (target ratio
//     ≥ 0.9); and mqtt failover to the other node: from the SIGKILL of
//     the node a client of both nodes is on to its connection to the
//     other, once a repetition (target ≤ 1 s), beside a new client's
//     connection time. Without ejabberd both are not measured.
//   - reference: the Autoware reference system (examples/referencesystem,
//     package refsys) on 2 workers, 1 worker and 2 workers via mosquitto:
//     the hot path's mean and p99 latency against its lower bound, the
//     time of 4 crunches in sequence measured in the same run (targets
//     ≤ 1.15 and ≤ 2; via mosquitto ≤ 1.3), its drops (target 0), the
//     behavior planner's period std (target ≤ 0.1 ms), and the CPU
//     against the crunch time; and the saturated graph (more crunch off
//     the hot path than 2 workers give) with priority 1 on the hot path
//     (mean target ≤ 1.3, 0 drops), and without priorities beside it.
//   - allocations per in-process event (target ≤ 1: a run's context),
//     bytes per idle subscription and per timer.
//
// [Run] runs the suite within a time budget; [Report.WriteTable] and
// [Report.WriteJSON] render it. The workload functions are exported for
// the package's `go test -bench` benchmarks.
//
// # Concurrency
//
// The suite measures the machine it runs on: run one suite at a time, on
// an otherwise quiet machine. [Histogram] is safe for concurrent use; the
// other types are not.
package bench
