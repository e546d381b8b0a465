// Package mqtt makes MQTT topics a source of subscriptions for the
// executor, and publishes to MQTT topics. It is robotexec's MQTT transport
// and the only package that imports the paho clients: MQTT 5 by default,
// on github.com/eclipse/paho.golang (its paho client, one per network
// connection, on a session that outlives them), and MQTT 3.1.1 for brokers
// without MQTT 5 (Config.Protocol), on github.com/eclipse/paho.mqtt.golang.
//
// [Dial] returns a [Client] at once; it connects in the background,
// retrying with backoff while the broker cannot be reached (and logging
// that it waits, with the broker's URL and never the password), and
// reconnects by itself after a lost connection. On every connection it
// subscribes every attached filter again.
//
// Given several brokers (Config.Brokers: the nodes of a cluster, or a
// primary and its standby), it connects to the first that answers and,
// when the connection is lost, tries the next at once, going round the
// list; it backs off only after a round in which none answered.
// [Client.Broker], Stats.Broker and the online status's user property
// [BrokerProperty] say which broker it is on. A node that does not have
// the persistent session is a new session: the client subscribes again,
// sends again what the lost broker had not acknowledged, counts the loss
// (Stats.SessionsLost) and logs once what its subscriptions may have
// missed.
//
// A Client is the remote of a [bus.Router], [Client.Router], the
// message path of the process, and a [subscribers.Source]:
//
//	ex := executor.New(executor.Options{Workers: 2})
//	o := ex.NewOwner("imu", nil)
//	o.Subscribe(client, "sensors/+/imu", cb, executor.Depth(100))
//
// # What the broker is told
//
// With MQTT 5 nothing is inferred from payloads or clocks; the broker is
// told what the process needs, on the wire:
//
//   - No Local on every non-shared subscription, with Config.InProcess:
//     the router delivers the process's own publications to its
//     subscriptions directly, and the broker never sends them back.
//     Shared subscriptions ($share/GROUP/FILTER) get them through the
//     broker, once, when it picks this process.
//   - A subscription identifier on each SUBSCRIBE: a received message goes
//     to the subscriptions whose identifiers it carries, once each, whether
//     the broker sends one copy per matching subscription (mosquitto) or
//     one for all (mochi, HiveMQ; frameConn keeps all their identifiers,
//     which paho alone would not).
//   - Retained messages: each new connection subscribes every filter
//     again and asks for its retained messages, which may have changed
//     while the client was away (a broker keeps no QoS 0 message for an
//     absent client, and may lose a session); the router gives each
//     subscription a topic's retained value once, then live copies (see
//     [bus.Renewed]). The status topic asks for none
//     (Retain Handling).
//   - Maximum Packet Size (MaxPayload and its headers) and Receive Maximum
//     (see Config.ReceiveMaximum) in CONNECT; the broker's Maximum Packet
//     Size from CONNACK bounds what the client publishes.
//   - Reason codes: a refused connection, subscription or publication is
//     a [*RefusedError] that names the broker's [Reason], counted per
//     reason ([Stats].Refused) and logged once per topic a minute.
//
// With MQTT 3.1.1 none of that can be said: in_process is off (every
// publication goes through the broker and comes back), and a message goes
// to every subscription whose filter matches its topic.
//
// # Delivery and acknowledgements
//
// A received message goes, in arrival order, into the queues of the
// subscriptions it is for, where their overflow policies apply.
// Message.Received is the arrival time; QoS and Retained are carried. A
// payload over Config.MaxPayload is dropped and counted (reason
// too_large), and a packet over it is read past without the client
// holding more than its topic, whatever its header claims; a message that
// no subscription is for is acknowledged and counted (reason unrouted).
//
// paho's handler never waits for the executor: it appends the message to
// an intake queue and returns, so paho keeps reading the connection and
// answering keep-alive pings however slow the callbacks are. One intake
// goroutine hands the messages over; with the Block policy it waits for
// room (and so holds back every subscription of the client). QoS 1 and 2
// messages are acknowledged to the broker only once handed over, so a
// full subscription holds the broker back within its Receive Maximum: no
// message the broker delivered is dropped, and memory stays bounded.
// Delivery is at least once: after a reconnection the broker may send a
// message again (Stats counts those marked DUP).
//
// # Sessions and status
//
// By default the session is persistent (Config.CleanSession false; MQTT 5:
// Clean Start false, kept Config.SessionExpiry after a disconnection): the
// broker keeps the subscriptions and queues QoS 1 and 2 messages while the
// client is away, and sends them when it returns. The client ID must then
// be stable and unique. Unless turned off, the client keeps a retained
// status on robotexec/<client_id>/status: "online" after each connection,
// "offline" on Close, and "offline" as its last will when it vanishes; it
// says online again if the broker publishes the will of a connection it
// replaced after the new one said online.
//
// # Publishing
//
// The router's publishers ([Client.Publisher]) never wait for the network
// or the broker, so callbacks may publish freely; [Client.PublishWait]
// publishes to the broker only and waits for its answer. QoS 1 and 2
// publications made between connections are kept in order and sent on
// the next one; those that the broker had not acknowledged when it lost
// the session (Session Present 0) are sent again, in order, but for QoS 2
// ones it had received (PUBREC), which count as published. The client
// keeps its unanswered publications in memory: a restart of the process
// loses them, while the broker keeps the session's messages for the
// client. A publication
// over Config.MaxPayload or the broker's Maximum Packet Size, or to a
// topic outside Config.Writable, is refused at Publish and counted, never
// sent.
//
// # Concurrency
//
// A Client is safe for concurrent use. Close may be called from any
// goroutine, any number of times. Payloads are shared, not copied: neither
// side may modify a payload after publishing or receiving it.
package mqtt
