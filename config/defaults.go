package config

import "reflect"

// Default returns the configuration made of the default tags only, before
// Resolve. The default tags are checked by the package tests, so building
// it does not fail.
func Default() *Config {
	c, _ := defaults()
	return c
}

func defaults() (*Config, error) {
	c := &Config{}
	return c, applyDefaults(reflect.ValueOf(c).Elem())
}
