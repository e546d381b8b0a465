package robotexec_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/robotexec/robotexec"
	"github.com/robotexec/robotexec/config"
)

// A Go program runs a config as robotexec run does, and stops it.
func ExampleStart() {
	cfg, err := config.Parse("robot.yaml", []byte(`
mqtt: { listen: "127.0.0.1:0", client_id: example-start }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := robotexec.Start(context.Background(), cfg, quiet)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("running")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println("stopped:", app.Shutdown(ctx))
	// Output:
	// running
	// stopped: <nil>
}
