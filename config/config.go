// Package config reads robotexec's config file, config.yaml: its schema,
// defaults, ${VAR} expansion and checks are in docs/config.md in the
// repository. A program that runs robotexec itself loads a config with
// Load and starts it with robotexec.Start.
//
// Every problem of a config is reported, each as
// "file:line: field: what is wrong" (Errors lists them).
package config

import (
	"github.com/robotexec/robotexec/internal/config"
)

// Config is a loaded config file: checked, with its defaults applied.
type Config struct {
	// c is the config; a Config is nothing else, so that robotexec's own
	// packages convert between the two (internal/facade).
	c config.Config
}

// Load reads and checks the config file at path, expanding ${VAR} from
// the environment. The error, if any, holds every problem (see Errors).
func Load(path string) (*Config, error) { return wrap(config.Load(path)) }

// Parse reads and checks data as the config file name holds it, as Load
// does.
func Parse(name string, data []byte) (*Config, error) { return wrap(config.Parse(name, data, nil)) }

func wrap(c *config.Config, err error) (*Config, error) {
	if err != nil {
		return nil, err
	}
	return &Config{c: *c}, nil
}

// File returns the path of the config's file, as it was loaded.
func (c *Config) File() string { return c.c.File }

// Errors returns the problems of a config that err reports, each an error
// whose message is "file:line: field: what is wrong", or none when err
// is not a config's.
func Errors(err error) []error {
	var out []error
	for _, e := range config.Errors(err) {
		out = append(out, e)
	}
	return out
}
