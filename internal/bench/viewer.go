package bench

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gorilla/websocket"

	"github.com/robotexec/robotexec/internal/view"
)

// viewer is a client of the live view speaking foxglove.websocket.v1, as
// Foxglove does: it subscribes to every channel and reads the Message
// Data frames as fast as it can, counting them by their stamps (the
// router's arrival times) in win and recording the time from each
// frame's stamp to its reading.
type viewer struct {
	ws    *websocket.Conn
	win   *window
	got   arrivals
	lat   *Histogram
	shard int
	done  chan struct{}
}

// dialViewer connects a viewer to the live view at addr, waits until
// topics channels are advertised, subscribes to them all, and starts
// reading; it records latencies in lat's shard and counts frames in win.
func dialViewer(addr string, topics int, lat *Histogram, shard int, win *window) (*viewer, error) {
	d := websocket.Dialer{Subprotocols: []string{view.Subprotocol}, HandshakeTimeout: pipelineWait}
	ws, _, err := d.Dial("ws://"+addr+"/", nil)
	if err != nil {
		return nil, fmt.Errorf("bench: viewer: %w", err)
	}
	v := &viewer{ws: ws, win: win, lat: lat, shard: shard, done: make(chan struct{})}
	if err := v.subscribeAll(topics); err != nil {
		ws.Close()
		return nil, fmt.Errorf("bench: viewer: %w", err)
	}
	go v.read()
	return v, nil
}

// subscribeAll reads the server's text messages until topics channels
// are advertised, and subscribes to each.
func (v *viewer) subscribeAll(topics int) error {
	type sub struct {
		ID        uint32 `json:"id"`
		ChannelID uint32 `json:"channelId"`
	}
	var subs []sub
	_ = v.ws.SetReadDeadline(time.Now().Add(pipelineWait))
	for len(subs) < topics {
		typ, data, err := v.ws.ReadMessage()
		if err != nil {
			return fmt.Errorf("%d of %d channels advertised: %w", len(subs), topics, err)
		}
		var m struct {
			Op       string `json:"op"`
			Channels []struct {
				ID uint32 `json:"id"`
			} `json:"channels"`
		}
		if typ != websocket.TextMessage || json.Unmarshal(data, &m) != nil || m.Op != "advertise" {
			continue
		}
		for _, ch := range m.Channels {
			subs = append(subs, sub{ID: uint32(len(subs) + 1), ChannelID: ch.ID})
		}
	}
	_ = v.ws.SetReadDeadline(time.Time{})
	return v.ws.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": subs})
}

// read reads frames until the connection ends.
func (v *viewer) read() {
	defer close(v.done)
	var hdr [13]byte
	for {
		typ, r, err := v.ws.NextReader()
		if err != nil {
			return
		}
		if typ != websocket.BinaryMessage {
			continue
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[0] != 0x01 {
			continue
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
		stamp := int64(binary.LittleEndian.Uint64(hdr[5:]))
		v.lat.Record(v.shard, time.Duration(time.Now().UnixNano()-stamp))
		v.win.count(&v.got, stamp)
	}
}

// close ends the connection and waits for the reader.
func (v *viewer) close() {
	v.ws.Close()
	<-v.done
}
