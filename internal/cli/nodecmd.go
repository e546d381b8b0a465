package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/internal/mqtt"
)

// nodeCommands are the subcommands of robotexec node.
func nodeCommands() []command {
	return []command{
		{"list", "[-broker URL] [-json]", "the instances on the broker, online or not, and their nodes", cmdNodeList},
		{"info", "[-broker URL] [-json] NAME", "a node's callbacks (trigger, group, queue) and, when its instance serves metrics, their runs, dispatch latency and drops", cmdNodeInfo},
	}
}

func cmdNode(args []string, stdout, stderr io.Writer) int {
	return runSub("node", nodeCommands(), args, stdout, stderr)
}

// graphCmd is a command that reads the graphs: node list, node info,
// topic list.
type graphCmd struct {
	name, args, summary string
	nargs               int
	// flags adds the command's own flags (optional).
	flags func(fs *flag.FlagSet)
	// also runs with the client after the graphs are read (optional).
	also func(ctx context.Context, c *mqtt.Client) error
}

// run parses the flags of the command and reads the graphs: it returns
// the instances, the JSON flag and the arguments, or an exit status.
func (g graphCmd) run(args []string, stdout, stderr io.Writer) ([]*instance, bool, []string, int) {
	name := g.name
	fs := newFlags(name, g.args, g.summary, stderr)
	cf := addClientFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if g.flags != nil {
		g.flags(fs)
	}
	nargs := g.nargs
	if done, code := parseFlags(fs, args, stdout); done {
		return nil, false, nil, code
	}
	if fs.NArg() != nargs {
		fmt.Fprintf(stderr, "robotexec %s: want %d argument(s)\n", name, nargs)
		fs.Usage()
		return nil, false, nil, ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cf.dial(ctx, stderr, 1)
	if err != nil {
		fmt.Fprintf(stderr, "robotexec %s: %v\n", name, err)
		return nil, false, nil, exitFor(err)
	}
	defer c.Close()
	ins, err := readInstances(ctx, c)
	if err == nil && g.also != nil {
		err = g.also(ctx, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "robotexec %s: %v\n", name, err)
		return nil, false, nil, ExitFailure
	}
	return ins, *asJSON, fs.Args(), -1
}

// listJSON is node list -json's output.
type listJSON struct {
	Instances []instanceJSON `json:"instances"`
}

type instanceJSON struct {
	ClientID string     `json:"client_id"`
	State    string     `json:"state"`
	Stale    bool       `json:"stale"`
	Version  string     `json:"version"`
	Started  *time.Time `json:"started"`
	// Broker is the broker the instance is on, which its graph names.
	Broker string     `json:"broker,omitempty"`
	Nodes  []nodeJSON `json:"nodes"`
}

type nodeJSON struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Group string `json:"group"`
}

func cmdNodeList(args []string, stdout, stderr io.Writer) int {
	ins, asJSON, _, code := graphCmd{name: "node list", args: "[flags]",
		summary: "List the robotexec instances on the broker, from their graph and status topics, and\ntheir nodes."}.run(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if asJSON {
		return printJSON(stdout, stderr, nodeListOut(ins))
	}
	printNodeList(stdout, ins)
	return ExitOK
}

// nodeListOut is node list -json's output for ins.
func nodeListOut(ins []*instance) listJSON {
	out := listJSON{Instances: []instanceJSON{}}
	for _, in := range ins {
		ij := instanceJSON{ClientID: in.ClientID, State: in.Status, Stale: in.Stale(), Version: in.Version,
			Broker: in.Broker, Nodes: []nodeJSON{}}
		if !in.Started.IsZero() {
			ij.Started = &in.Started
		}
		for _, n := range in.Nodes {
			ij.Nodes = append(ij.Nodes, nodeJSON{n.Name, n.Type, n.Group})
		}
		out.Instances = append(out.Instances, ij)
	}
	return out
}

// printNodeList prints the instances, then the nodes of those whose graph
// is live: an instance whose status says offline while its graph is
// still there (its last will: it died, or lost the broker) is listed as
// "offline (stale graph)", and its nodes are not, as they no longer run
// on the broker. -json lists them, with "stale": true.
func printNodeList(w io.Writer, ins []*instance) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tSTATE\tVERSION\tSTARTED")
	for _, in := range ins {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.ClientID, in.state(), dash(in.Version), timeOrDash(in.Started))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tTYPE\tGROUP\tINSTANCE")
	for _, in := range ins {
		if in.Stale() {
			continue
		}
		for _, n := range in.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Type, dash(n.Group), in.ClientID)
		}
	}
	tw.Flush()
}

func printJSON(stdout, stderr io.Writer, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec:", err)
		return ExitFailure
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return ExitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// findNode returns the instances' nodes named name.
func findNode(ins []*instance, name string) (found []*instance, nodes []graph.Node) {
	for _, in := range ins {
		for _, n := range in.Nodes {
			if n.Name == name {
				found, nodes = append(found, in), append(nodes, n)
			}
		}
	}
	return found, nodes
}
