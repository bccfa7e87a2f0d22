// Package config loads the configuration of every Vigia command.
//
// One loader applies, in order: the defaults written in the struct tags, the
// YAML file named by --config (or VIGIA_CONFIG), the environment (VIGIA_ plus
// the key path upper-cased, dots replaced by underscores), and the
// command-line flags (--http.addr, --storage.backend, ...). Resolve then
// fills derived values (paths under data_dir, node_id, http.public_url) and
// Validate checks the result. Every error names the key it is about.
//
// Keys, environment variables, flags and the reference in docs/config.md are
// all generated from the struct tags of Config, so adding a key is adding a
// field:
//
//	Foo Duration `yaml:"foo" default:"5s" doc:"what foo is"`
//
// A field tagged secret:"true" is replaced by Redacted; secret:"url" removes
// the password and token parameters of a URL.
package config
