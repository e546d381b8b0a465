// Package refsys is the ROS 2 real-time working group's reference system
// (github.com/ros-realtime/reference-system) as robotexec node types:
// the benchmark that executor papers and the ROS 2 docs quote. Its six
// node kinds are node types (TypeSensor, TypeTransform, TypeFusion,
// TypeCyclic, TypeIntersection, TypeCommand) that Register registers,
// and Autoware is its Autoware graph: 24 nodes of a car's perception and planning,
// fixed timer periods, a fixed amount of number crunching per callback
// (Crunch), and KPIs that the command nodes log. Saturated is the same
// graph with the crunch off the hot path raised until it needs more CPU
// than 2 workers give (Demand), and priority 1 on the hot path.
//
// Every message is the original's 4,096-byte Message: a history of the
// nodes it passed (each node's entry holds the start of its callback,
// its sequence number and the upstream samples it found missing) and
// the result of the last crunch. The nodes' subscriptions are keep-last
// queues, as the original's QoS: depth 1 with drop_oldest, depth 10 at
// the command nodes; the node types set them, whatever the config's
// executor defaults.
//
// The KPIs are the original's print_sample_path, per command node,
// after a warm-up of 9 messages: the latency from the oldest stamp of a
// message to its arrival; the hot path's latency, from the later of
// FrontLidarDriver's and RearLidarDriver's stamps to
// ObjectCollisionEstimator's (the start of its callback, so the least it
// can be is the crunch time of four callbacks in sequence: a points
// transformer, PointCloudFusion, RayGroundFilter and
// EuclideanClusterDetector); the hot path's drops; and BehaviorPlanner's
// period. Unlike the original, whose warm-up counts the messages of
// every command node together, each command node skips its own.
//
// Stamps come from the node's clock (Node.Clock): the wall clock under
// robotexec run, as the original's system clock, and the simulated clock
// in nodetest, where a node's crunch takes no time.
//
// # Concurrency
//
// Register is safe for concurrent use. Each node's callbacks share its
// mutually exclusive group, except an intersection's, which each have a group of their own and share no
// state. Message, Statistic and KPIs are not safe for concurrent use.
package refsys
