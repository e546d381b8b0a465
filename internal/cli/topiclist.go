package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
)

// topicJSON is a topic of topic list -json.
type topicListJSON struct {
	Topic       string     `json:"topic"`
	Messages    int        `json:"messages"`
	Publishers  []endpoint `json:"publishers"`
	Subscribers []endpoint `json:"subscribers"`
}

// endpoint is a node of an instance that publishes or subscribes; Filter
// is its pattern when it is not the topic itself.
type endpoint struct {
	Node     string `json:"node"`
	Instance string `json:"instance"`
	Filter   string `json:"filter,omitempty"`
}

func cmdTopicList(args []string, stdout, stderr io.Writer) int {
	var listen *time.Duration
	seen := map[string]int{}
	var mu sync.Mutex
	ins, asJSON, _, code := graphCmd{name: "topic list", args: "[flags]",
		summary: "List the topics of the instances' graphs and of -t of traffic, with the nodes that\npublish and subscribe to them. The instances' own robotexec/... topics are left out.",
		flags: func(fs *flag.FlagSet) {
			listen = fs.Duration("t", time.Second, "how long to listen to the traffic on '#' (0: graphs only)")
		},
		also: func(ctx context.Context, c *mqtt.Client) error {
			return listenTraffic(ctx, c, *listen, func(topic string) { mu.Lock(); seen[topic]++; mu.Unlock() })
		},
	}.run(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	topics := topicTable(ins, seen)
	if asJSON {
		return printJSON(stdout, stderr, struct {
			Topics []topicListJSON `json:"topics"`
		}{topics})
	}
	printTopicList(stdout, topics)
	return ExitOK
}

// listenTraffic calls seen with the topic of each message on '#' for d.
func listenTraffic(ctx context.Context, c *mqtt.Client, d time.Duration, seen func(string)) error {
	if d <= 0 {
		return nil
	}
	ex := executor.New(executor.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	_, err := ex.NewOwner("topics", nil).Subscribe(c, "#", func(ctx context.Context, m subscribers.Message) {
		if !strings.HasPrefix(m.Topic, "robotexec/") {
			seen(m.Topic)
		}
	}, executor.Depth(1<<14))
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return ex.Run(runCtx)
}

// topicTable joins the graphs' subscriptions and publications with the
// topics seen: a concrete topic gets every node whose pattern matches it;
// a pattern that matched no topic seen is listed as itself. A stale graph
// (its instance's status says offline: it died, or lost the broker)
// names no publisher or subscriber, as in the live view.
func topicTable(ins []*instance, seen map[string]int) []topicListJSON {
	rows := map[string]*topicListJSON{}
	row := func(t string) *topicListJSON {
		if rows[t] == nil {
			rows[t] = &topicListJSON{Topic: t, Messages: seen[t], Publishers: []endpoint{}, Subscribers: []endpoint{}}
		}
		return rows[t]
	}
	for t := range seen {
		row(t)
	}
	type pattern struct {
		filter string
		e      endpoint
		sub    bool
	}
	var pats []pattern
	for _, in := range ins {
		if in.Stale() {
			continue
		}
		for _, n := range in.Nodes {
			for _, s := range n.Subscriptions {
				pats = append(pats, pattern{s.Topic, endpoint{Node: n.Name, Instance: in.ClientID}, true})
			}
			for _, p := range n.Publications {
				pats = append(pats, pattern{p.Topic, endpoint{Node: n.Name, Instance: in.ClientID}, false})
			}
		}
	}
	for _, p := range pats {
		inner, err := bus.RouteFilter(p.filter)
		if err != nil {
			continue
		}
		matched := false
		for t := range seen {
			if subscribers.Match(inner, t) {
				matched = true
				addEndpoint(row(t), p.e, p.filter, p.sub)
			}
		}
		if !matched {
			addEndpoint(row(p.filter), p.e, p.filter, p.sub)
		}
	}
	out := make([]topicListJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b topicListJSON) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}

func addEndpoint(r *topicListJSON, e endpoint, filter string, sub bool) {
	if filter != r.Topic {
		e.Filter = filter
	}
	if sub {
		r.Subscribers = append(r.Subscribers, e)
	} else {
		r.Publishers = append(r.Publishers, e)
	}
}

func printTopicList(w io.Writer, topics []topicListJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tMESSAGES\tPUBLISHERS\tSUBSCRIBERS")
	for _, t := range topics {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Topic, t.Messages, endpoints(t.Publishers), endpoints(t.Subscribers))
	}
	tw.Flush()
}

// endpoints prints nodes as NODE@INSTANCE, with the filter that matched
// in parentheses.
func endpoints(es []endpoint) string {
	if len(es) == 0 {
		return "-"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Node + "@" + e.Instance
		if e.Filter != "" {
			parts[i] += " (" + e.Filter + ")"
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
