// Package model holds the Promela model of the executor's dispatch
// protocol (executor.pml and the files it includes) and the Go test that
// checks it exhaustively with spin. It has no Go API: see README.md for
// what is modelled, the bounds, and the properties checked.
package model
