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
// A Client is a [subscribers.Source]:
//
//	ex := executor.New(executor.Options{Workers: 2})
//	o := ex.NewOwner("imu", nil)
//	o.Subscribe(client, "sensors/+/imu", cb, executor.Depth(100))
//
// Each incoming message goes to every attached subscription whose filter
// matches its topic, in arrival order, into the subscription's own queue
// where its overflow policy applies. Message.Received is the arrival time;
// QoS and Retained are carried. A payload over Config.MaxPayload (1 MiB by
// default) is dropped and counted (reason too_large). Shared subscriptions
// ($share/GROUP/FILTER) are supported.
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
// [Publisher.Publish] never waits for the network or the broker, so
// callbacks may publish freely; [Publisher.PublishContext] waits for the
// broker's acknowledgement. QoS 1 and 2 messages published while
// reconnecting are kept in order and sent after reconnecting.
//
// # Concurrency
//
// Client and Publisher are safe for concurrent use. Close may be called
// from any goroutine, any number of times. Payloads are shared, not
// copied: neither side may modify a payload after publishing or receiving
// it.
package mqtt
