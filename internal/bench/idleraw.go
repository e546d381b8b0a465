package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	paho5 "github.com/eclipse/paho.golang/paho"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// idleRawRole is the child role of the idle group's baseline: args are
// the numbers of subscriptions and of tickers.
const idleRawRole = "idle-raw"

// idleReady is the line that the idle baseline writes on its standard
// output once it subscribed and its tickers run.
const idleReady = "idle-raw: ready"

func init() {
	childRoles[idleRawRole] = func(ctx context.Context, args []string) error { return idleRaw(ctx, args, os.Stdout) }
}

// idleRaw runs the idle group's baseline until ctx ends: an embedded
// broker (the one robotexec embeds, with its defaults) and a bare
// paho.golang MQTT 5 client connected to it, with args[0] subscriptions,
// each of its own topic and republishing what comes to a topic of its
// own, as a bridge node does, and args[1] Go tickers at 1 Hz, each
// publishing a heartbeat node's JSON at QoS 1 and waiting for the
// broker's acknowledgement. It writes idleReady on ready once it runs.
func idleRaw(ctx context.Context, args []string, ready io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("bench: %s: want SUBSCRIPTIONS TICKERS, got %q", idleRawRole, args)
	}
	subs, err1 := strconv.Atoi(args[0])
	beats, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || subs < 0 || beats < 0 {
		return fmt.Errorf("bench: %s: want two counts, got %q", idleRawRole, args)
	}
	brk, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
	if err != nil {
		return err
	}
	defer brk.Close()
	pc, err := dialIdleRaw(ctx, brk.Addr(), subs)
	if err != nil {
		return err
	}
	defer func() { _ = pc.Disconnect(&paho5.Disconnect{}) }()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, beats)
	for i := range beats {
		wg.Go(func() {
			if err := idleBeat(ctx, pc, fmt.Sprintf("beat%d", i), fmt.Sprintf("idle/beat/%d", i)); err != nil {
				errs <- err
			}
		})
	}
	fmt.Fprintln(ready, idleReady)
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	cancel()
	wg.Wait()
	return err
}

// dialIdleRaw connects the idle baseline's client to the broker at addr
// and subscribes it to subs topics, each republishing to one of its own.
func dialIdleRaw(ctx context.Context, addr string, subs int) (*paho5.Client, error) {
	conn, err := net.DialTimeout("tcp", addr, bridgeWait)
	if err != nil {
		return nil, err
	}
	forward := func(pr paho5.PublishReceived) (bool, error) {
		to := "idle/out/" + pr.Packet.Topic[len("idle/in/"):]
		_, err := pr.Client.PublishWithOptions(context.Background(), &paho5.Publish{Topic: to, QoS: 1, Payload: pr.Packet.Payload},
			paho5.PublishOptions{Method: paho5.PublishMethod_AsyncSend})
		return true, err
	}
	pc := paho5.NewClient(paho5.ClientConfig{Conn: conn, OnPublishReceived: []func(paho5.PublishReceived) (bool, error){forward},
		PacketTimeout: bridgeWait})
	cctx, cancel := context.WithTimeout(ctx, bridgeWait)
	defer cancel()
	if _, err := pc.Connect(cctx, &paho5.Connect{ClientID: "robotexec-bench-idle-raw", KeepAlive: 30, CleanStart: true}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("bench: %s: connect: %w", idleRawRole, err)
	}
	// A SUBSCRIBE of a hundred filters at a time: the broker's answer to
	// each is what the start waits for.
	for first := 0; first < subs; first += 100 {
		var so []paho5.SubscribeOptions
		for i := first; i < min(first+100, subs); i++ {
			so = append(so, paho5.SubscribeOptions{Topic: fmt.Sprintf("idle/in/%d", i), QoS: 1})
		}
		if _, err := pc.Subscribe(cctx, &paho5.Subscribe{Subscriptions: so}); err != nil {
			_ = pc.Disconnect(&paho5.Disconnect{})
			return nil, fmt.Errorf("bench: %s: subscribe: %w", idleRawRole, err)
		}
	}
	return pc, nil
}

// idleBeat publishes node's heartbeats on topic once a second until ctx
// ends, as the heartbeat node does.
func idleBeat(ctx context.Context, pc *paho5.Client, node, topic string) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var seq uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case at := <-t.C:
			seq++
			b, err := json.Marshal(struct {
				Node string `json:"node"`
				Seq  uint64 `json:"seq"`
				Time string `json:"time"`
			}{node, seq, at.UTC().Format(time.RFC3339Nano)})
			if err != nil {
				return err
			}
			if _, err := pc.Publish(ctx, &paho5.Publish{Topic: topic, QoS: 1, Payload: b}); err != nil && ctx.Err() == nil {
				return fmt.Errorf("bench: %s: publish: %w", idleRawRole, err)
			}
		}
	}
}
