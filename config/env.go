package config

import (
	"errors"
	"reflect"
	"strings"
)

// EnvPrefix starts the name of every environment variable read by Load.
const EnvPrefix = "VIGIA_"

// EnvConfigFile names the configuration file when --config is not given.
const EnvConfigFile = EnvPrefix + "CONFIG"

// EnvName returns the environment variable of a key path:
// "http.addr" gives "VIGIA_HTTP_ADDR".
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// ApplyEnv overlays onto c the variable of each key found in environ
// ("NAME=value" entries, as os.Environ returns them; a later entry wins).
// Only the variables of known keys are read, so other VIGIA_ variables are
// ignored. An empty value counts as unset. Lists are not read from the
// environment. All bad values are reported together.
func (c *Config) ApplyEnv(environ []string) error {
	env := envMap(environ)
	root := reflect.ValueOf(c).Elem()
	var errs []error
	for _, f := range fieldsOf(root.Type()) {
		if f.list {
			continue
		}
		name := EnvName(f.path)
		val := env[name]
		if val == "" {
			continue
		}
		if err := setText(root.FieldByIndex(f.index), val); err != nil {
			errs = append(errs, &KeyError{Key: f.path, Source: "env " + name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// envMap indexes the VIGIA_ entries of environ by name.
func envMap(environ []string) map[string]string {
	m := make(map[string]string)
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, EnvPrefix) {
			m[name] = val
		}
	}
	return m
}
