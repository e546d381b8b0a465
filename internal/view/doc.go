// Package view is robotexec's live view: a WebSocket server of the
// Foxglove WebSocket protocol (subprotocol foxglove.websocket.v1), so that
// Foxglove and Lichtblick connect to a running robot.
//
// The process shows the server what it sees with [Server.Observe]: each
// topic becomes a channel when its first message is observed, with the
// json encoding and a JSON Schema inferred from that message when the
// payload is JSON (a later payload of the topic that is not JSON goes on a
// second channel of the topic), and the raw encoding [RawEncoding]
// otherwise. A viewer subscribes to channels and gets their messages as
// Message Data frames stamped with the time given to Observe, in
// nanoseconds. With [Options.Publish], viewers may advertise channels of
// their own (capability clientPublish, encoding json) and publish on
// them: each message is handed to Publish, as a node's publication, and
// observed.
//
// With [Options.ConnectionGraph], viewers may subscribe to the connection
// graph that [Server.SetGraph] sets (capability connectionGraph): they get
// it in whole, then what changed.
//
// With [Options.Time], viewers get the time that [Server.SetTime] sets
// (capability time): Time messages, the latest time when a connection's
// writer is ready, so a slow viewer skips times. robotexec run sets it
// from the executor's clock under executor.use_sim_time, and stamps the
// messages with that clock.
//
// With [Options.Parameters], viewers may read them (capability
// parameters); a setParameters is refused with a status.
//
// Any other request to the listener is for robotexec's own page, whose
// files are embedded: plain JavaScript that speaks the protocol to the
// server that served it, and reads each callback's figures from
// /stats.json, which [Server.SetStats] serves.
//
// Viewers authenticate with HTTP basic authentication on the WebSocket
// upgrade (and on the page's requests) when the server has users; each
// user reads (sees and subscribes to) and writes (publishes on) the
// topics its filters match.
// An anonymous viewer, when allowed, reads every topic, and writes every
// topic only with [Options.AnonymousPublish].
//
// # No web page drives the robot
//
// A browser lets any page open a WebSocket to any address, the view's on
// loopback included, and names the page's origin in the upgrade's Origin
// header. The server accepts an upgrade whose Origin is its own page's
// (the address the browser reached it at, an IP address or localhost) or
// one of [Options.AllowedOrigins]; it refuses any other with 403 before
// the upgrade, and counts it ([Stats].Refused). A request without Origin
// is not a browser's and goes on to the credentials.
//
// # A slow viewer never slows the robot
//
// Observe never blocks and never waits for a viewer: each connection has a
// bounded send queue ([Options.Queue] messages and [Options.QueueBytes]
// bytes); when a message does not fit, the oldest queued ones make room
// for it (a viewer sees the latest, as ROS's KEEP_LAST), and each message
// dropped is counted for that connection ([Stats]). Advertisements are not queued: each connection's
// writer reads the channels it has not announced yet when it is ready to,
// so none is ever lost. The number of channels is bounded
// ([Options.MaxChannels]); the topics beyond it are not shown, and are
// counted.
//
// # Concurrency
//
// A Server is safe for concurrent use: Observe is called from the
// executor's workers and the MQTT client at once. Each connection has one
// reader goroutine (the HTTP handler's) and one writer goroutine, both
// owned by the Server and ended by Close.
package view
