package facade_test

import (
	"reflect"
	"testing"

	publicconfig "github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/internal/config"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TestLayouts: each public type is a struct of one field, the internal
// value it converts to, so that a pointer to the one is a pointer to the
// other.
func TestLayouts(t *testing.T) {
	for _, pair := range []struct{ public, internal reflect.Type }{
		{reflect.TypeFor[subscribers.Subscription](), reflect.TypeFor[bus.Subscription]()},
		{reflect.TypeFor[subscribers.Router](), reflect.TypeFor[bus.Router]()},
		{reflect.TypeFor[subscribers.Publisher](), reflect.TypeFor[bus.Publisher]()},
		{reflect.TypeFor[subscribers.Message](), reflect.TypeFor[bus.Message]()},
		{reflect.TypeFor[timers.Timer](), reflect.TypeFor[timerq.Timer]()},
		{reflect.TypeFor[publicconfig.Config](), reflect.TypeFor[config.Config]()},
		{reflect.TypeFor[timers.Sim](), reflect.TypeFor[timerq.Sim]()},
		{reflect.TypeFor[timers.Event](), reflect.TypeFor[timerq.Event]()},
	} {
		pt, it := pair.public, pair.internal
		if pt.Kind() == reflect.Struct && it.Kind() == reflect.Struct && pt.ConvertibleTo(it) {
			continue // a message: the same fields
		}
		if pt.NumField() != 1 || pt.Field(0).Type != it || pt.Field(0).Offset != 0 || pt.Size() != it.Size() {
			t.Errorf("%v is not one field of %v", pt, it)
		}
	}
}
