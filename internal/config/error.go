package config

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem of a configuration, located in its file. Its text is
// FILE:LINE: FIELD: MSG, for example
//
//	config.yaml:12: nodes[1].params.period: "fast" is not a duration
//
// without ": FIELD" when Field is empty and without ":LINE" when Line is 0.
type Error struct {
	// File is the configuration file as it was named to Load or Parse.
	File string
	// Line is the 1-based line of the problem; 0 when it has none (an
	// unreadable file).
	Line int
	// Field is the path of the value at fault, for example mqtt.qos or
	// nodes[1].params.period; empty for a problem of the whole document.
	Field string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying error, if any (an *fs.PathError from Load, for
	// example), so that errors.Is and errors.As see through an Error.
	Err error
}

// Error returns FILE:LINE: FIELD: MSG.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File == "" {
			b.WriteString("line ")
		} else {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Join returns one error that holds every error of errs, flattened from
// joined errors, ordered by file and line (errors without a location first,
// then in their given order within a line), without repetitions; nil when
// there is none. The text is one error a line. Callers use it to merge their
// own checks (node types, node params) with those of Parse, so that a user
// sees every problem in file order.
func Join(errs ...error) error {
	var flat []error
	for _, err := range errs {
		flat = flatten(flat, err)
	}
	var uniq []error
	seen := map[string]bool{}
	for _, err := range flat {
		if s := err.Error(); !seen[s] {
			seen[s] = true
			uniq = append(uniq, err)
		}
	}
	slices.SortStableFunc(uniq, func(a, b error) int {
		fa, la := location(a)
		fb, lb := location(b)
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(la, lb))
	})
	return errors.Join(uniq...)
}

// Errors returns the *Error values that err holds, directly or joined,
// in order.
func Errors(err error) []*Error {
	var out []*Error
	for _, e := range flatten(nil, err) {
		var ce *Error
		if errors.As(e, &ce) {
			out = append(out, ce)
		}
	}
	return out
}

func flatten(dst []error, err error) []error {
	if err == nil {
		return dst
	}
	if _, ok := err.(*Error); !ok {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				dst = flatten(dst, e)
			}
			return dst
		}
	}
	return append(dst, err)
}

func location(err error) (string, int) {
	var e *Error
	if errors.As(err, &e) {
		return e.File, e.Line
	}
	return "", 0
}

func joinErrors(errs []*Error) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return Join(out...)
}
