package refsys

import (
	"fmt"
	"strings"
)

// Graph is a reference system: its nodes, in the order they are built,
// and its hot path.
type Graph struct {
	Nodes   []Node
	HotPath HotPath
}

// Node is one node of a Graph as config.yaml gives it: its name, its
// type and its params, a YAML flow mapping that starts with "{ " and ends
// with " }".
type Node struct {
	Name, Type, Params string
}

// Config returns the nodes section of a config.yaml that runs g.
func (g Graph) Config() string {
	var b strings.Builder
	b.WriteString("nodes:\n")
	for _, n := range g.Nodes {
		b.WriteString("  - { name: " + n.Name + ", type: " + n.Type + ", params: " + n.Params + " }\n")
	}
	return b.String()
}

// WithCrunch returns a copy of g whose crunching nodes (every node but
// the sensors and the commands) have the crunch limit limit, an
// intersection's for each of its connections.
func (g Graph) WithCrunch(limit uint64) Graph {
	out := Graph{Nodes: make([]Node, len(g.Nodes)), HotPath: g.HotPath}
	for i, n := range g.Nodes {
		if n.Type != TypeSensor && n.Type != TypeCommand {
			n.Params = strings.TrimSuffix(n.Params, " }") + fmt.Sprintf(", crunch: %d }", limit)
		}
		out.Nodes[i] = n
	}
	return out
}

// Autoware is the Autoware reference system with its default timing, as
// the original's autoware_system_builder.hpp and timing/default.hpp build
// it: 24 nodes, 23 topics, each node publishing on a topic of its own
// name (EuclideanClusterDetector on a second one too), every crunch
// limit DefaultCrunch. examples/referencesystem/autoware.yaml is the same
// graph, for robotexec run.
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
}
