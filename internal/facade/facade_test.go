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
		if pt.NumField() > 1 {
			sameFields(t, pt, it) // a message
			continue
		}
		if pt.NumField() != 1 || pt.Field(0).Type != it || pt.Field(0).Offset != 0 || pt.Size() != it.Size() {
			t.Errorf("%v is not one field of %v", pt, it)
		}
	}
}

// sameFields checks that two struct types have the same fields, blank
// ones included, at the same offsets: the one converts to the other
// through a pointer though their blank fields keep Go from converting
// them.
func sameFields(t *testing.T, a, b reflect.Type) {
	t.Helper()
	if a.NumField() != b.NumField() || a.Size() != b.Size() {
		t.Errorf("%v and %v differ in size or in their number of fields", a, b)
		return
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset {
			t.Errorf("%v and %v differ at field %d: %s %v at %d, %s %v at %d", a, b, i, fa.Name, fa.Type, fa.Offset, fb.Name, fb.Type, fb.Offset)
		}
	}
}
