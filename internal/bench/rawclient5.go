package bench

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/url"
	"sync"
	"time"

	paho5 "github.com/eclipse/paho.golang/paho"
)

// raw5Forwarder is the bridge workload's second raw forwarder: a bare
// paho.golang client (MQTT 5) whose OnPublishReceived handler republishes
// each message of its subscription to the output topic, on paho.golang's
// goroutine, in arrival order. It publishes with the AsyncSend method, as
// rawClient's handler publishes without waiting for the token: the library
// stores the message and writes it, and returns without waiting for the
// PUBACK, so that many are in flight (up to the broker's Receive Maximum,
// which the library honours). paho.golang acknowledges each received
// message once the handler returns.
type raw5Forwarder struct {
	pc      *paho5.Client
	to      string
	qos     byte
	timeout time.Duration
	// receiveMax is the broker's Receive Maximum, from its CONNACK: how
	// many QoS 1 publications the library keeps in flight at most.
	receiveMax uint16

	mu  sync.Mutex
	err error // the first publication that failed, if any
}

// raw5Name names the raw paho.golang forwarder in the report.
const raw5Name = "raw paho.golang 5.0"

// dialRaw5 connects a raw5Forwarder to broker (a tcp:// URL, maybe with
// credentials) as clientID,
// with a clean session (Clean Start, session expiry 0) or a persistent one
// (no Clean Start, a session that never expires: MQTT 3.1.1's persistent
// session, as rawClient's), waiting at most timeout for the broker's
// answer, also for the subscription. It forwards filter from to topic to
// with QoS qos.
func dialRaw5(broker, clientID string, clean bool, timeout time.Duration, from, to string, qos byte) (*raw5Forwarder, error) {
	u, err := url.Parse(broker)
	if err != nil {
		return nil, fmt.Errorf("bench: raw5 forwarder %s: %w", clientID, err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, timeout)
	if err != nil {
		return nil, fmt.Errorf("bench: raw5 forwarder %s: %w", clientID, err)
	}
	f := &raw5Forwarder{to: to, qos: qos, timeout: timeout}
	f.pc = paho5.NewClient(paho5.ClientConfig{
		Conn:              conn,
		OnPublishReceived: []func(paho5.PublishReceived) (bool, error){f.republish},
		PacketTimeout:     timeout,
	})
	cp := &paho5.Connect{ClientID: clientID, KeepAlive: 30, CleanStart: clean}
	if u.User != nil {
		// Credentials in the URL, as the other clients take them.
		cp.Username, cp.UsernameFlag = u.User.Username(), true
		if p, ok := u.User.Password(); ok {
			cp.Password, cp.PasswordFlag = []byte(p), true
		}
	}
	if !clean {
		never := uint32(math.MaxUint32)
		cp.Properties = &paho5.ConnectProperties{SessionExpiryInterval: &never}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ca, err := f.pc.Connect(ctx, cp)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("bench: raw5 forwarder %s: connect to %s: %w", clientID, broker, err)
	}
	f.receiveMax = math.MaxUint16 // MQTT 5's default
	if ca.Properties != nil && ca.Properties.ReceiveMaximum != nil {
		f.receiveMax = *ca.Properties.ReceiveMaximum
	}
	_, err = f.pc.Subscribe(ctx, &paho5.Subscribe{Subscriptions: []paho5.SubscribeOptions{{Topic: from, QoS: qos}}})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: raw5 forwarder %s: subscribe %q: %w", clientID, from, err)
	}
	return f, nil
}

// republish is the forwarder's handler.
func (f *raw5Forwarder) republish(pr paho5.PublishReceived) (bool, error) {
	_, err := pr.Client.PublishWithOptions(context.Background(),
		&paho5.Publish{Topic: f.to, QoS: f.qos, Payload: pr.Packet.Payload},
		paho5.PublishOptions{Method: paho5.PublishMethod_AsyncSend})
	if err != nil {
		f.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
	}
	return true, nil
}

// Err returns the first publication that failed, or nil.
func (f *raw5Forwarder) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		return nil
	}
	return fmt.Errorf("raw5 forwarder: publish: %w", f.err)
}

// Close disconnects.
func (f *raw5Forwarder) Close() { _ = f.pc.Disconnect(&paho5.Disconnect{}) }
