// Package model holds the Promela model of the executor's dispatch
// protocol (executor.pml and the files it includes), smaller models beside
// it (priority.pml, the run queue's priority rule; seed000.pml), and the
// Go test that checks them exhaustively with spin. It has no Go API: see
// README.md for what is modelled, the bounds, and the properties checked.
package model
