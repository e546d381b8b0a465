package refsys

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Graph is a reference system: its nodes, in the order they are built,
// its hot path, and the config priorities of its nodes.
type Graph struct {
	Nodes   []Node
	HotPath HotPath
	// Priorities are the priorities of nodes, by name: the priority key
	// of their entries in the config (nodes.Spec.Priority). A node not
	// named has 0, the default.
	Priorities map[string]int
	// PriorityWorkers is the config's executor.priority_workers: workers
	// beside the others that run only the callbacks of a priority above
	// 0. 0 leaves the executor section out.
	PriorityWorkers int
	// Realtime is the config's executor.realtime: the priority workers
	// in Linux's SCHED_FIFO class.
	Realtime bool
	// PinWorkers is the config's executor.pin_workers: each worker's
	// thread on a CPU of its own.
	PinWorkers bool
	// ReserveForTimers is the config's executor.reserve_for_timers: a
	// worker leaves a callback of priority 0 that would run past a
	// timer's deadline for the timer.
	ReserveForTimers bool
	// Linger is the config's mqtt.linger: how long a publication bound
	// for the broker may wait to go with the next ones. 0 leaves the
	// mqtt section out.
	Linger time.Duration
}

// Node is one node of a Graph as config.yaml gives it: its name, its
// type and its params, a YAML flow mapping that starts with "{ " and ends
// with " }".
type Node struct {
	Name, Type, Params string
}

// Config returns the nodes section of a config.yaml that runs g, after
// its executor section if g has priority workers, pinned workers or the
// reserve for timers.
func (g Graph) Config() string {
	var b strings.Builder
	if g.PriorityWorkers > 0 || g.PinWorkers || g.ReserveForTimers {
		b.WriteString("executor:\n")
		if g.PriorityWorkers > 0 {
			fmt.Fprintf(&b, "  priority_workers: %d\n", g.PriorityWorkers)
		}
		if g.Realtime {
			b.WriteString("  realtime: true\n")
		}
		if g.PinWorkers {
			b.WriteString("  pin_workers: true\n")
		}
		if g.ReserveForTimers {
			b.WriteString("  reserve_for_timers: true\n")
		}
		b.WriteString("\n")
	}
	if g.Linger > 0 {
		fmt.Fprintf(&b, "mqtt:\n  linger: %v\n\n", g.Linger)
	}
	b.WriteString("nodes:\n")
	for _, n := range g.Nodes {
		b.WriteString("  - { name: " + n.Name + ", type: " + n.Type)
		if p := g.Priorities[n.Name]; p != 0 {
			fmt.Fprintf(&b, ", priority: %d", p)
		}
		b.WriteString(", params: " + n.Params + " }\n")
	}
	return b.String()
}

// WithCrunch returns a copy of g whose crunching nodes (every node but
// the sensors and the commands) have the crunch limit limit, an
// intersection's for each of its connections.
func (g Graph) WithCrunch(limit uint64) Graph {
	out := g.clone()
	for i, n := range out.Nodes {
		if n.Type != TypeSensor && n.Type != TypeCommand {
			out.Nodes[i].Params = withCrunch(n.Params, limit)
		}
	}
	return out
}

// SaturatedCrunch is the crunch limit of the nodes off the hot path in
// the saturated graph (Saturated): Crunch(12288) takes about 8 times as
// long as Crunch(DefaultCrunch), 17 ms against 2.1 ms on a 2-vCPU AMD
// EPYC VM.
const SaturatedCrunch = 12288

// Saturate returns a copy of g whose crunching nodes off its hot path
// have the crunch limit limit: the nodes not in g.HotPath.Nodes, and of
// an intersection on the path, the connections whose input is not a
// hot-path node's topic (a node's name). The hot path keeps its crunch.
func (g Graph) Saturate(limit uint64) Graph {
	out := g.clone()
	for i, n := range out.Nodes {
		switch {
		case n.Type == TypeSensor || n.Type == TypeCommand:
		case n.Type == TypeIntersection && g.onHotPath(n.Name):
			out.Nodes[i].Params = g.connections(n, func(c *Connection, on bool) {
				if !on {
					c.Crunch = &limit
				}
			})
		case !g.onHotPath(n.Name):
			out.Nodes[i].Params = withCrunch(n.Params, limit)
		}
	}
	return out
}

// WithHotPathPriority returns a copy of g whose hot path has priority p:
// each node of g.HotPath.Nodes has priority p, but an intersection,
// whose connections off the path keep theirs: the connections whose
// input is a hot-path node's topic have priority p. Sensors are timers,
// which run before any subscription whatever their priority: theirs
// marks the path.
func (g Graph) WithHotPathPriority(p int) Graph {
	out := g.clone()
	out.Priorities = maps.Clone(g.Priorities)
	if out.Priorities == nil {
		out.Priorities = map[string]int{}
	}
	for i, n := range out.Nodes {
		switch {
		case !g.onHotPath(n.Name):
		case n.Type == TypeIntersection:
			out.Nodes[i].Params = g.connections(n, func(c *Connection, on bool) {
				if on {
					c.Priority = p
				}
			})
		default:
			out.Priorities[n.Name] = p
		}
	}
	return out
}

// WithPriorityWorkers returns a copy of g run with n priority workers
// (the config's executor.priority_workers).
func (g Graph) WithPriorityWorkers(n int) Graph {
	out := g.clone()
	out.PriorityWorkers = n
	return out
}

// WithRealtime returns a copy of g whose priority workers run in Linux's
// real-time class (the config's executor.realtime).
func (g Graph) WithRealtime() Graph {
	out := g.clone()
	out.Realtime = true
	return out
}

// WithPinnedWorkers returns a copy of g whose workers' threads are
// pinned, each to a CPU (the config's executor.pin_workers).
func (g Graph) WithPinnedWorkers() Graph {
	out := g.clone()
	out.PinWorkers = true
	return out
}

// WithTimerReserve returns a copy of g whose workers keep themselves for
// timers about to fall due (the config's executor.reserve_for_timers).
func (g Graph) WithTimerReserve() Graph {
	out := g.clone()
	out.ReserveForTimers = true
	return out
}

// WithLinger returns a copy of g whose publications to the broker may
// wait d to go with the next ones (the config's mqtt.linger).
func (g Graph) WithLinger(d time.Duration) Graph {
	out := g.clone()
	out.Linger = d
	return out
}

// Saturated is the Autoware graph with the crunch of its nodes off the
// hot path raised to SaturatedCrunch, so that they need more CPU than 2
// workers give, priority 1 on its hot path, and 2 priority workers for
// it, one for each of its points transformers, which run in parallel
// (see Saturate, WithHotPathPriority and WithPriorityWorkers).
// examples/referencesystem/saturated.yaml is the same graph, for
// robotexec run.
var Saturated = Autoware.Saturate(SaturatedCrunch).WithHotPathPriority(1).WithPriorityWorkers(2)

// clone returns a copy of g whose nodes may be changed.
func (g Graph) clone() Graph {
	return Graph{Nodes: slices.Clone(g.Nodes), HotPath: g.HotPath, Priorities: g.Priorities, PriorityWorkers: g.PriorityWorkers, Realtime: g.Realtime, PinWorkers: g.PinWorkers, ReserveForTimers: g.ReserveForTimers, Linger: g.Linger}
}

// onHotPath reports whether the node or topic name is on g's hot path.
func (g Graph) onHotPath(name string) bool { return slices.Contains(g.HotPath.Nodes, name) }

// withCrunch returns the flow mapping params with the key crunch: limit
// added.
func withCrunch(params string, limit uint64) string {
	return strings.TrimSuffix(params, " }") + fmt.Sprintf(", crunch: %d }", limit)
}

// connections returns the params of the intersection n with f applied
// to each of its connections, told whether the connection's input is on
// g's hot path. n's params are Autoware's, which parse: a malformed one
// panics.
func (g Graph) connections(n Node, f func(c *Connection, on bool)) string {
	var p struct {
		Connections []Connection `yaml:"connections"`
		Crunch      *uint64      `yaml:"crunch"`
	}
	if err := decodeParams(n, &p); err != nil {
		panic(err)
	}
	var b strings.Builder
	b.WriteString("{ ")
	if p.Crunch != nil {
		fmt.Fprintf(&b, "crunch: %d, ", *p.Crunch)
	}
	b.WriteString("connections: [")
	for i, c := range p.Connections {
		f(&c, g.onHotPath(c.Input))
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("{ input: " + c.Input + ", output: " + c.Output)
		if c.Crunch != nil {
			fmt.Fprintf(&b, ", crunch: %d", *c.Crunch)
		}
		if c.Priority != 0 {
			fmt.Fprintf(&b, ", priority: %d", c.Priority)
		}
		b.WriteString(" }")
	}
	b.WriteString("] }")
	return b.String()
}

// Autoware is the Autoware reference system with its default timing, as
// the original's autoware_system_builder.hpp and timing/default.hpp build
// it: 24 nodes, 23 topics, each node publishing on a topic of its own
// name (EuclideanClusterDetector on a second one too), every crunch
// limit DefaultCrunch; its workers pinned, each to a CPU (PinWorkers),
// so that the two points transformers, ready together, run on two CPUs
// at once. examples/referencesystem/autoware.yaml is the same graph, for
// robotexec run.
var Autoware = Graph{
	Nodes: []Node{
		{"FrontLidarDriver", TypeSensor, "{ period: 100ms }"},
		{"RearLidarDriver", TypeSensor, "{ period: 100ms }"},
		{"PointCloudMap", TypeSensor, "{ period: 120ms }"},
		{"Visualizer", TypeSensor, "{ period: 60ms }"},
		{"Lanelet2Map", TypeSensor, "{ period: 100ms }"},
		{"EuclideanClusterSettings", TypeSensor, "{ period: 25ms }"},

		{"PointsTransformerFront", TypeTransform, "{ input: FrontLidarDriver }"},
		{"PointsTransformerRear", TypeTransform, "{ input: RearLidarDriver }"},
		{"VoxelGridDownsampler", TypeTransform, "{ input: PointCloudFusion }"},
		{"PointCloudMapLoader", TypeTransform, "{ input: PointCloudMap }"},
		{"RayGroundFilter", TypeTransform, "{ input: PointCloudFusion }"},
		{"ObjectCollisionEstimator", TypeTransform, "{ input: EuclideanClusterDetector }"},
		{"MPCController", TypeTransform, "{ input: BehaviorPlanner }"},
		{"ParkingPlanner", TypeTransform, "{ input: Lanelet2MapLoader }"},
		{"LanePlanner", TypeTransform, "{ input: Lanelet2MapLoader }"},

		{"PointCloudFusion", TypeFusion, "{ inputs: [PointsTransformerFront, PointsTransformerRear] }"},
		{"NDTLocalizer", TypeFusion, "{ inputs: [VoxelGridDownsampler, PointCloudMapLoader] }"},
		{"VehicleInterface", TypeFusion, "{ inputs: [MPCController, BehaviorPlanner] }"},
		{"Lanelet2GlobalPlanner", TypeFusion, "{ inputs: [Visualizer, NDTLocalizer] }"},
		{"Lanelet2MapLoader", TypeFusion, "{ inputs: [Lanelet2Map, Lanelet2GlobalPlanner] }"},

		{"BehaviorPlanner", TypeCyclic, "{ period: 100ms, inputs: [ObjectCollisionEstimator, NDTLocalizer, " +
			"Lanelet2GlobalPlanner, Lanelet2MapLoader, ParkingPlanner, LanePlanner] }"},

		{"EuclideanClusterDetector", TypeIntersection, "{ connections: [" +
			"{ input: RayGroundFilter, output: EuclideanClusterDetector }, " +
			"{ input: EuclideanClusterSettings, output: EuclideanIntersection }] }"},

		{"VehicleDBWSystem", TypeCommand, "{ input: VehicleInterface }"},
		{"IntersectionOutput", TypeCommand, "{ input: EuclideanIntersection }"},
	},
	HotPath: HotPath{
		Roots: []string{"FrontLidarDriver", "RearLidarDriver"},
		Sink:  "ObjectCollisionEstimator",
		Nodes: []string{"FrontLidarDriver", "RearLidarDriver", "PointsTransformerFront", "PointsTransformerRear",
			"PointCloudFusion", "RayGroundFilter", "EuclideanClusterDetector", "ObjectCollisionEstimator"},
	},
	PinWorkers: true,
}
