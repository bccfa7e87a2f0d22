package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeConfig writes a YAML file in a fresh directory and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vigia.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatalf("write config: %v", err)
	}
	return path
}

// checkErr fails unless err wraps want and its message contains every part.
func checkErr(t *testing.T, err, want error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %v", want)
	}
	if want != nil && !errors.Is(err, want) {
		t.Errorf("err = %v, want it to wrap %v", err, want)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("err %q does not contain %q", err, p)
		}
	}
}

// setKey sets the scalar key at path from text, as the environment would.
func (c *Config) setKey(path, text string) error {
	root := reflect.ValueOf(c).Elem()
	for _, f := range fieldsOf(root.Type()) {
		if f.path == path && !f.list {
			return setText(root.FieldByIndex(f.index), text)
		}
	}
	return fmt.Errorf("no key %q", path)
}
