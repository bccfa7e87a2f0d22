package config

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// fieldInfo is one key of a configuration struct type, found by reflection.
type fieldInfo struct {
	path  string // dotted YAML path relative to the walked type
	index []int  // field index path for reflect.Value.FieldByIndex
	field reflect.StructField
	list  bool // a list of structs, set from the file only
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// fieldsOf returns the leaf keys and lists of the struct type t, in
// declaration order. Fields without a yaml tag are not keys.
func fieldsOf(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	collectFields(t, "", nil, &out)
	return out
}

func collectFields(t reflect.Type, prefix string, index []int, out *[]fieldInfo) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name := yamlName(sf)
		if name == "" || !sf.IsExported() {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		idx := append(append([]int(nil), index...), i)
		switch {
		case isScalarType(sf.Type):
			*out = append(*out, fieldInfo{path: path, index: idx, field: sf})
		case sf.Type.Kind() == reflect.Struct:
			collectFields(sf.Type, path, idx, out)
		case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct:
			*out = append(*out, fieldInfo{path: path, index: idx, field: sf, list: true})
		}
	}
}

// yamlName returns the key name of a struct field, or "" if it has none.
func yamlName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// isScalarType reports whether values of t are written as one scalar.
func isScalarType(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// typeName describes the type of a key for documentation and errors.
func typeName(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Duration]():
		return "duration"
	case reflect.TypeFor[Size]():
		return "size"
	case reflect.TypeFor[Time]():
		return "time"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Slice:
		return "list"
	case reflect.Struct:
		return "mapping"
	}
	return t.String()
}

// setText parses s into v, a settable value of a scalar type.
func setText(v reflect.Value, s string) error {
	if v.CanAddr() {
		if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
			return u.UnmarshalText([]byte(s))
		}
	}
	t := strings.TrimSpace(s)
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(t)
		if err != nil {
			return fmt.Errorf("%w %q (want true or false)", ErrInvalidValue, s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(t, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%w %q (want an integer)", ErrInvalidValue, s)
		}
		v.SetInt(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(t, v.Type().Bits())
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w %q (want a number)", ErrInvalidValue, s)
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("%w: unsupported type %s", ErrInvalidValue, v.Type())
	}
	return nil
}

// applyDefaults sets every scalar key of the struct v that has a default
// tag. Lists are left alone; their elements get defaults when decoded.
func applyDefaults(v reflect.Value) error {
	for _, f := range fieldsOf(v.Type()) {
		def, ok := f.field.Tag.Lookup("default")
		if !ok || f.list {
			continue
		}
		if err := setText(v.FieldByIndex(f.index), def); err != nil {
			return &KeyError{Key: f.path, Source: "default", Err: err}
		}
	}
	return nil
}
