package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/recording"
)

// runLog is what replay reads from a recording of robotexec run -record.
type runLog struct {
	path        string
	config      []byte // the config file stored, nil if none
	configFile  string
	start, stop time.Time
	dropped     string   // the recorder's drops, as stored
	runs        app.Runs // the runs of the nodes' callbacks; nil if not stored
	inputs      []recorded
	outputs     map[string][]recorded        // by topic, in publication order
	timers      map[timerKey][]app.TimerCall // by node and timer, in order
	nodeCalls   map[string][]callRef         // each node's timer calls, in order
	end         time.Time                    // the last message's time
}

// recorded is a recorded input or output.
type recorded struct {
	topic, node string
	at          time.Time
	payload     []byte
}

// timerKey names a periodic timer of a node.
type timerKey struct{ node, name string }

// callRef is the i-th recorded call of a timer.
type callRef struct {
	key timerKey
	i   int
}

// readRunLog reads the recording at path.
func readRunLog(path string) (*runLog, error) {
	l := &runLog{path: path, outputs: map[string][]recorded{}, timers: map[timerKey][]app.TimerCall{}, nodeCalls: map[string][]callRef{}}
	s, err := recording.Scan(path, l.add)
	if err != nil {
		return nil, err
	}
	if c, ok := s.Metadata[app.MetaConfig]; ok {
		l.config, l.configFile = []byte(c["yaml"]), c["file"]
	}
	run, ok := s.Metadata[app.MetaRun]
	if !ok {
		return nil, fmt.Errorf("%s: not a recording of robotexec run -record (no %q metadata)", path, app.MetaRun)
	}
	if l.start, err = time.Parse(time.RFC3339Nano, run["start"]); err != nil {
		return nil, fmt.Errorf("%s: %s: start: %w", path, app.MetaRun, err)
	}
	l.stop = l.end
	if st, ok := s.Metadata[app.MetaStop]; ok {
		if l.stop, err = time.Parse(time.RFC3339Nano, st["time"]); err != nil {
			return nil, fmt.Errorf("%s: %s: time: %w", path, app.MetaStop, err)
		}
		l.dropped = st["dropped"]
		if s := st["runs"]; s != "" {
			if err := json.Unmarshal([]byte(s), &l.runs); err != nil {
				return nil, fmt.Errorf("%s: %s: runs: %w", path, app.MetaStop, err)
			}
		}
	}
	return l, nil
}

// add takes one message of the recording.
func (l *runLog) add(m recording.Message) error {
	if m.At.After(l.end) {
		l.end = m.At
	}
	data := append([]byte(nil), m.Data...)
	switch m.Role {
	case recording.Input:
		l.inputs = append(l.inputs, recorded{topic: m.Topic, at: m.At, payload: data})
	case recording.Output:
		l.outputs[m.Topic] = append(l.outputs[m.Topic], recorded{topic: m.Topic, node: m.Node, at: m.At, payload: data})
	case recording.TimerCall:
		var c app.TimerCall
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("%s: timer call of %s/%s: %w", l.path, m.Node, m.Topic, err)
		}
		k := timerKey{m.Node, m.Topic}
		l.nodeCalls[m.Node] = append(l.nodeCalls[m.Node], callRef{k, len(l.timers[k])})
		l.timers[k] = append(l.timers[k], c)
	}
	return nil
}

// loadConfig returns the config to replay: the file at path, or the one
// stored in the recording when path is empty.
func (l *runLog) loadConfig(path string) (*config.Config, error) {
	if path != "" {
		return app.LoadAndCheck(path)
	}
	if l.config == nil {
		return nil, fmt.Errorf("%s: no config stored: give a CONFIG", l.path)
	}
	name := fmt.Sprintf("%s (stored %s)", l.configFile, l.path)
	cfg, err := config.Parse(name, l.config, os.LookupEnv)
	if cfg == nil {
		return nil, err
	}
	if err := app.Check(cfg, err); err != nil {
		return nil, err
	}
	return cfg, nil
}

// knows reports whether the recorded run had node: a timer call, an
// output or counted runs of it.
func (l *runLog) knows(node string) bool {
	if len(l.nodeCalls[node]) > 0 || l.runs[node] != nil {
		return true
	}
	for _, out := range l.outputs {
		for _, o := range out {
			if o.node == node {
				return true
			}
		}
	}
	return false
}
