package config

import (
	"flag"
	"fmt"
	"io"
)

// Load builds the configuration of a command from its arguments (only
// configuration flags: --config FILE and --KEY VALUE) and its environment
// (os.Environ()): defaults, then the file, the environment and the flags,
// then Resolve and Validate. "-h" gives an error wrapping flag.ErrHelp;
// commands that print usage or have flags of their own use RegisterFlags on
// their own flag.FlagSet and then Flags.Load.
func Load(args, environ []string) (*Config, error) {
	fs := flag.NewFlagSet("vigia", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("config: %w: unexpected argument %q", ErrInvalidValue, fs.Arg(0))
	}
	return f.Load(environ)
}

// Load builds the configuration from the parsed flags and environ: the
// defaults, the file named by --config (or VIGIA_CONFIG), the environment,
// the flags, then Resolve and Validate.
func (f *Flags) Load(environ []string) (*Config, error) {
	c, err := defaults()
	if err != nil {
		return nil, err
	}
	file := f.file
	if file == "" {
		file = envMap(environ)[EnvConfigFile]
	}
	if file != "" {
		if err := c.LoadFile(file); err != nil {
			return nil, err
		}
	}
	if err := c.ApplyEnv(environ); err != nil {
		return nil, err
	}
	if err := f.Apply(c); err != nil {
		return nil, err
	}
	if err := c.Resolve(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
