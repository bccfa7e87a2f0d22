package config

import (
	"errors"
	"flag"
	"reflect"
)

// Flags holds the configuration flags given on a command line: --config and
// one flag per key, named by its path (--http.addr, --storage.backend, ...).
// Values are checked by Apply, so that errors name the key like the file and
// environment errors do.
type Flags struct {
	file string
	set  []flagSetting // in the order given
}

type flagSetting struct {
	info fieldInfo
	text string
}

// RegisterFlags registers --config and one flag per configuration key
// (lists excepted) on fs, and returns where their values are kept.
func RegisterFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.file, "config", "", "YAML configuration `file` (env "+EnvConfigFile+")")
	for _, info := range fieldsOf(reflect.TypeFor[Config]()) {
		if info.list {
			continue
		}
		v := &flagValue{flags: f, info: info, text: info.field.Tag.Get("default")}
		usage := info.field.Tag.Get("doc") + " (env " + EnvName(info.path) + ")"
		fs.Var(v, info.path, usage)
	}
	return f
}

// File returns the value of --config, "" when not given.
func (f *Flags) File() string { return f.file }

// Apply overlays the flags given onto c, in the order given. All bad values
// are reported together.
func (f *Flags) Apply(c *Config) error {
	root := reflect.ValueOf(c).Elem()
	var errs []error
	for _, s := range f.set {
		if err := setText(root.FieldByIndex(s.info.index), s.text); err != nil {
			errs = append(errs, &KeyError{Key: s.info.path, Source: "flag --" + s.info.path, Err: err})
		}
	}
	return errors.Join(errs...)
}

// flagValue is the flag.Value of one key.
type flagValue struct {
	flags *Flags
	info  fieldInfo
	text  string
}

// String returns the last value given, or the default.
func (v *flagValue) String() string { return v.text }

// Set records a value; it is checked by Flags.Apply.
func (v *flagValue) Set(s string) error {
	v.text = s
	v.flags.set = append(v.flags.set, flagSetting{info: v.info, text: s})
	return nil
}

// IsBoolFlag lets boolean keys be given without a value (--use_ssl).
func (v *flagValue) IsBoolFlag() bool {
	return v.info.field.Type != nil && v.info.field.Type.Kind() == reflect.Bool
}
