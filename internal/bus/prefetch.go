package bus

import "unsafe"

// A queue's slots pass between two cores: the publisher writes a message
// into a slot, and the worker that takes it reads it and clears the slot
// (so that the payload can be collected), which leaves the slot's cache
// lines in the worker's cache. The publisher's next write to that slot,
// one lap of the ring later, must fetch them back, and the Unlock that
// follows its write (a locked instruction) waits until they have come;
// where moving a line between cores is slow, that wait sets the
// publisher's pace, and a slowed publisher lets the workers serve its
// messages in short runs (BENCHMARKS.md, "What this machine allows"). So
// accept asks for the lines of the slot the queue's next message goes to,
// for writing, as soon as it has stored a message (prefetchSlot): the
// fetch overlaps the publisher's other work, and the next write finds the
// lines in its own cache (docs/design.md, Scheduler model: message
// batches).

// slotLast is the offset of a slot's last byte: a slot of 96 bytes spans
// two or three cache lines, and prefetchSlot fetches the lines of its
// first byte, of the byte 64 on, and of its last.
const slotLast = int(unsafe.Sizeof(item{})) - 1

// The assembly's displacement is one signed byte.
var _ [127 - slotLast]struct{}
