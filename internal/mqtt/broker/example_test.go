package broker_test

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// Start a broker on a free loopback port; clients connect to its URL.
func ExampleNew() {
	b, err := broker.New(broker.Config{
		Listen: "127.0.0.1:0",
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	fmt.Println(strings.HasPrefix(b.URL(), "tcp://127.0.0.1:"))
	// Output: true
}
