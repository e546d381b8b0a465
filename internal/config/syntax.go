package config

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// parseYAML parses data into its root node; ok is false when data is not
// YAML. An empty document has a nil root. A config holds one document: a
// second one that is not empty is an error.
func parseYAML(file string, data []byte) (root *yaml.Node, errs []*Error, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, true
		}
		return nil, []*Error{syntaxError(file, data, err)}, false
	}
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			return root, errs, true
		}
		if err != nil {
			return nil, []*Error{syntaxError(file, data, err)}, false
		}
		if len(more.Content) > 0 && !isNull(more.Content[0]) {
			errs = append(errs, &Error{File: file, Line: more.Line, Msg: "unexpected second YAML document (a config file holds one)"})
			return root, errs, true
		}
	}
}

// syntaxError turns an error of the YAML parser ("yaml: line 3: did not
// find expected key") into an *Error with its line. The parser leaves the
// line out on the first line and for a few errors; syntaxError finds it.
func syntaxError(file string, data []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, m, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line, msg = l, m
			}
		}
	}
	switch {
	case line == 0:
		line = findLine(data, msg)
	case parserErrors[msg]:
		// The parser's marks count lines from 0 and, unlike the
		// scanner's, reach the message so.
		line++
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg, Err: err}
}

// parserErrors are the messages of yaml.v3's parser, as opposed to its
// scanner's and reader's.
var parserErrors = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// findLine returns the line of an error that the parser reported without
// one.
func findLine(data []byte, msg string) int {
	if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		name, _, _ = strings.Cut(name, "' referenced")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			return 1 + bytes.Count(data[:i], []byte("\n"))
		}
		return 0
	}
	for _, reader := range []string{"control characters", "invalid", "incomplete", "input error", "unexpected low", "expected low"} {
		if strings.HasPrefix(msg, reader) {
			// An error of the reader, which has no line: find the first
			// character that YAML does not allow.
			return badCharLine(data)
		}
	}
	// A scanner or parser error on the first line.
	return 1
}

func badCharLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 || !printable(r, i) {
			return line
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return 0
}

// printable is YAML's set of allowed characters.
func printable(r rune, offset int) bool {
	switch {
	case r == 0x09 || r == 0x0A || r == 0x0D || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7E, r >= 0xA0 && r <= 0xD7FF, r >= 0x10000 && r <= 0x10FFFF:
		return true
	case r == 0xFEFF:
		return offset == 0
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	}
	return false
}
