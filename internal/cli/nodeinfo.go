package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/robotexec/robotexec/internal/graph"
)

// nodeInfoJSON is node info -json's output, one object per node found.
type nodeInfoJSON struct {
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	Group        string         `json:"group"`
	Instance     string         `json:"instance"`
	State        string         `json:"state"`
	Stale        bool           `json:"stale"`
	Metrics      string         `json:"metrics,omitempty"`
	Callbacks    []callbackJSON `json:"callbacks"`
	Publications []string       `json:"publications"`
}

type callbackJSON struct {
	Name string `json:"name"`
	// Kind is subscription or timer; Trigger the topic filter or the
	// period.
	Kind     string     `json:"kind"`
	Trigger  string     `json:"trigger"`
	Group    string     `json:"group"`
	Depth    int        `json:"depth,omitempty"`
	Overflow string     `json:"overflow,omitempty"`
	Live     *liveStats `json:"live,omitempty"`
}

func cmdNodeInfo(args []string, stdout, stderr io.Writer) int {
	ins, asJSON, rest, code := graphCmd{name: "node info", args: "[flags] NAME", nargs: 1,
		summary: "Describe the node NAME: its callbacks with their triggers, groups and queues, and,\nwhen its instance serves metrics, their runs, dispatch latency and drops."}.run(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	found, nodes := findNode(ins, rest[0])
	if len(found) == 0 {
		fmt.Fprintf(stderr, "robotexec node info: no node %q on the broker%s\n", rest[0], knownNodes(ins))
		return ExitFailure
	}
	for i, in := range found {
		info := describeNode(in, nodes[i], stderr)
		if asJSON {
			printJSON(stdout, stderr, info)
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printNodeInfo(stdout, info)
	}
	return ExitOK
}

// knownNodes lists the nodes there are, for an error.
func knownNodes(ins []*instance) string {
	var names []string
	for _, in := range ins {
		for _, n := range in.Nodes {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return " (no instance has a graph)"
	}
	slices.Sort(names)
	return " (nodes: " + strings.Join(slices.Compact(names), ", ") + ")"
}

// describeNode gathers what node info prints, scraping the instance's
// metrics when it is online and serves them.
func describeNode(in *instance, n graph.Node, stderr io.Writer) nodeInfoJSON {
	info := nodeInfoJSON{Name: n.Name, Type: n.Type, Group: n.Group, Instance: in.ClientID, State: in.Status,
		Stale: in.Stale(), Metrics: in.Metrics, Callbacks: []callbackJSON{}, Publications: []string{}}
	var live map[cbKey]*liveStats
	if in.Metrics != "" && in.Status != "offline" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var err error
		if live, err = scrapeStats(ctx, in.Metrics); err != nil {
			fmt.Fprintf(stderr, "robotexec node info: metrics of %s: %v\n", in.ClientID, err)
		}
		cancel()
	}
	for _, s := range n.Subscriptions {
		info.Callbacks = append(info.Callbacks, callbackJSON{Name: s.Callback, Kind: "subscription", Trigger: s.Topic,
			Group: s.Group, Depth: s.Depth, Overflow: s.Overflow, Live: live[cbKey{n.Name, s.Callback}]})
	}
	for _, t := range n.Timers {
		kind := "timer"
		if t.OneShot {
			kind = "one-shot timer"
		}
		info.Callbacks = append(info.Callbacks, callbackJSON{Name: t.Callback, Kind: kind, Trigger: t.Period,
			Group: t.Group, Live: live[cbKey{n.Name, t.Callback}]})
	}
	for _, p := range n.Publications {
		info.Publications = append(info.Publications, p.Topic)
	}
	return info
}

func printNodeInfo(w io.Writer, info nodeInfoJSON) {
	state := info.State
	if info.Stale {
		state = "offline (stale graph)"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "node:\t%s\ntype:\t%s\ngroup:\t%s\ninstance:\t%s (%s)\nmetrics:\t%s\n",
		info.Name, info.Type, dash(info.Group), info.Instance, dash(state), dash(info.Metrics))
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CALLBACK\tKIND\tTRIGGER\tGROUP\tDEPTH\tOVERFLOW\tRUNS\tLATENCY P50\tLATENCY P99\tDROPS")
	for _, c := range info.Callbacks {
		depth := "-"
		if c.Depth > 0 {
			depth = fmt.Sprint(c.Depth)
		}
		runs, p50, p99, drops := "-", "-", "-", "-"
		if l := c.Live; l != nil {
			runs, drops = fmt.Sprint(l.Runs), fmt.Sprint(l.Dropped)
			if l.Runs > 0 {
				p50, p99 = seconds(l.P50S), seconds(l.P99S)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Kind, c.Trigger, dash(c.Group), depth, dash(c.Overflow), runs, p50, p99, drops)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PUBLICATIONS")
	for _, p := range info.Publications {
		fmt.Fprintln(w, p)
	}
}

// seconds prints a latency in seconds as a duration.
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond / 10).String()
}
