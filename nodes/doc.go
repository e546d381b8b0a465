// Package nodes is the API that robot software is written against: a node
// type registers a constructor, and each node of that type built from
// config.yaml subscribes, publishes and sets timers through its *Node.
//
//	func init() { nodes.Register("imu_filter", "low-pass filter for IMU samples", New) }
//
//	func New(n *nodes.Node) error {
//		p := Params{Alpha: 0.2, Period: 50 * time.Millisecond}
//		if err := n.Params(&p); err != nil { // strict decode, defaults kept
//			return err
//		}
//		out := n.Publisher(p.Output)
//		nodes.Subscribe(n, p.Input, func(ctx context.Context, s Sample) { ... })
//		n.Timer(p.Period, func(ctx context.Context, ev timers.Event) { out.PublishJSON(ctx, avg) })
//		return nil
//	}
//
// A constructor registers callbacks and returns; it must not block. The
// registration calls do not return errors: a bad topic, say, is recorded on
// the node and fails its construction with a message naming the node, so a
// constructor reads as a plain list of what the node does.
//
// Every callback gets its run's context first: done when the run returns,
// or at the executor's drain deadline. A publication under it is the
// callback's: into a full block queue it mutes that callback until the
// queue drains, and never waits; under any other context it waits for
// room until that context is done. Nothing is inferred from goroutines or
// call stacks.
//
// Every callback of a node joins the node's default group, which is
// mutually exclusive unless the config puts the node in a shared group:
// callbacks of one node never overlap, so they share the node's state
// without locks. [Node.NewGroup] makes another group, and executor.InGroup
// puts a callback in it; the registrations take package executor's
// options, and [QoS] and [Retain].
//
// Messages travel through a [subscribers.Router] (Env.Router): a node's
// publication reaches the matching subscriptions of its process directly
// and the MQTT broker for everyone else. In tests and in the dry run that
// checks a config the router is an in-process one, without a broker.
//
// # Replay
//
// robotexec run -record records a run (what each node publishes, when each
// periodic timer runs) and robotexec replay re-runs the nodes on a simulated
// clock. A node replays to the same outputs when they depend only on its
// params, its messages and the times of its events: stamp with
// timers.Event.Expected or the input's Received time, not with Actual,
// Clock().Now() or time.Now, and seed any randomness from the params or the
// node's name.
//
// # Concurrency
//
// Register is meant for init functions. A Node is used by its constructor
// and its callbacks; its methods are safe for concurrent use.
package nodes
