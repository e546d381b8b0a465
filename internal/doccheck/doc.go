// Package doccheck holds a test that every package of the module has a
// package comment and every exported name a doc comment.
package doccheck
