// Package mqtt makes MQTT topics a source of subscriptions for the
// executor, and publishes to MQTT topics. It is robotexec's MQTT transport
// and the only package that imports paho (github.com/eclipse/paho.mqtt.golang,
// MQTT 3.1.1).
//
// [Dial] returns a [Client] at once; it connects in the background,
// retrying with backoff while the broker cannot be reached (and logging
// that it waits, with the broker's URL and never the password), and
// reconnects by itself after a lost connection. On every connection it
// subscribes every attached filter again.
//
// A Client is the remote of a [subscribers.Router], [Client.Router], the
// message path of the process, and a [subscribers.Source]:
//
//	ex := executor.New(executor.Options{Workers: 2})
//	o := ex.NewOwner("imu", nil)
//	o.Subscribe(client, "sensors/+/imu", cb, executor.Depth(100))
//
// Each incoming message goes to every attached subscription whose filter
// matches its topic, in arrival order, into the subscription's own queue
// where its overflow policy applies. Message.Received is the arrival time;
// QoS and Retained are carried. A payload over Config.MaxPayload (1 MiB by
// default) is dropped and counted (reason too_large); a message that no
// subscription matches is acknowledged and counted (reason unrouted).
// Shared subscriptions ($share/GROUP/FILTER) are supported: the broker
// splits FILTER's messages among the members of GROUP, in this process
// and others, and a subscription that detaches leaves its group.
//
// With Config.InProcess the router is local first: a publication reaches
// the matching subscriptions of the process directly and the broker for
// everyone else, and its echo from the broker is not delivered again (see
// [subscribers.Router] for how, and Config.NoEcho).
//
// # Delivery and acknowledgements
//
// paho's message handler never waits for the executor: it appends the
// message to an intake queue and returns, so paho keeps reading the
// connection and answering keep-alive pings however slow the callbacks are.
// One intake goroutine hands the messages to the subscriptions in order;
// with the Block overflow policy it waits for room there (and so holds
// back every subscription of the client). QoS 1 and 2 messages are
// acknowledged to the broker only once handed over, so a stalled
// subscription makes the broker hold the backlog within its in-flight
// window instead of this process buffering it. Delivery is at least once:
// after a reconnection the broker may send a message again (Stats counts
// those marked DUP); deduplicate with an ID in the payload where it matters.
//
// # Sessions and status
//
// By default the session is persistent (Config.CleanSession false): the
// broker keeps the subscriptions and queues QoS 1 and 2 messages while the
// client is away, and sends them when it returns. The client ID must then
// be stable and unique. Unless turned off, the client keeps a retained
// status on robotexec/<client_id>/status: "online" after each connection,
// "offline" on Close, and "offline" as its last will when it vanishes. The
// client subscribes to its own status and says online again if the broker
// publishes the will of a connection it replaced after the new one said
// online (mochi does when a client reconnects faster than the broker
// notices the old connection's end).
//
// # Publishing
//
// The router's publishers ([Client.Publisher]) never wait for the network
// or the broker, so callbacks may publish freely; [Client.PublishWait]
// publishes to the broker only and waits for its acknowledgement. QoS 1
// and 2 messages published while reconnecting are kept in order and sent
// after reconnecting.
//
// A publication over Config.MaxPayload, or to a topic outside
// Config.Writable, is refused at once and counted. A broker that refuses
// a publication anyway closes the connection (MQTT 3.1.1 has no other
// way), and paho would send that publication first after every
// reconnection; the client sends it again last, and drops it when the
// next connection is closed on it too, with a warning naming its topic
// and size (see poison.go for the rule).
//
// # Concurrency
//
// A Client is safe for concurrent use. Close may be called
// from any goroutine, any number of times. Payloads are shared, not
// copied: neither side may modify a payload after publishing or receiving
// it.
package mqtt
