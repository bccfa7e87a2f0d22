package config

import (
	"fmt"
	"os"
	"reflect"

	"gopkg.in/yaml.v3"
)

// maxAliasDepth bounds how many YAML aliases are followed in a row.
const maxAliasDepth = 32

// LoadFile overlays the YAML file at path onto c; see LoadYAML.
func (c *Config) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: read file: %w", err)
	}
	return c.LoadYAML(data)
}

// LoadYAML overlays a YAML document onto c. Keys the document does not set,
// or sets to null, keep their value in c; a list in the document replaces
// the list in c, each element starting from its defaults. Unknown and
// duplicate keys are errors naming the full key path and line.
func (c *Config) LoadYAML(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config: parse file: %w", err)
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		root = doc.Content[0]
	}
	if root.Kind == 0 || root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("config: %w: the file must be a mapping of keys, got a %s (line %d)", ErrWrongShape, nodeKindName(root), root.Line)
	}
	return decodeNode(root, reflect.ValueOf(c).Elem(), "")
}

// decodeNode sets v, found at key path, from the YAML node n.
func decodeNode(n *yaml.Node, v reflect.Value, path string) error {
	n, err := followAlias(n, path)
	if err != nil {
		return err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	t := v.Type()
	switch {
	case isScalarType(t):
		if n.Kind != yaml.ScalarNode {
			return shapeError(n, path, t)
		}
		if err := setText(v, n.Value); err != nil {
			return &KeyError{Key: path, Source: lineOf(n), Err: err}
		}
		return nil
	case t.Kind() == reflect.Struct:
		return decodeMapping(n, v, path)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return decodeList(n, v, path)
	}
	return &KeyError{Key: path, Source: lineOf(n), Err: fmt.Errorf("%w: unsupported type %s", ErrInvalidValue, t)}
}

func decodeMapping(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return shapeError(n, path, v.Type())
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if err := decodeMerge(val, v, path); err != nil {
				return err
			}
			continue
		}
		key := joinPath(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("config: %w: a mapping key under %q is not a name (line %d)", ErrWrongShape, path, k.Line)
		}
		if seen[k.Value] {
			return fmt.Errorf("config: %w %q (line %d)", ErrDuplicateKey, key, k.Line)
		}
		seen[k.Value] = true
		f, ok := fieldByName(v.Type(), k.Value)
		if !ok {
			return fmt.Errorf("config: %w %q (line %d)", ErrUnknownKey, key, k.Line)
		}
		if err := decodeNode(val, v.FieldByIndex(f.Index), key); err != nil {
			return err
		}
	}
	return nil
}

// decodeMerge applies a YAML merge key ("<<: *anchor" or a list of them).
func decodeMerge(n *yaml.Node, v reflect.Value, path string) error {
	n, err := followAlias(n, path)
	if err != nil {
		return err
	}
	if n.Kind != yaml.SequenceNode {
		return decodeMapping(n, v, path)
	}
	for _, item := range n.Content {
		item, err := followAlias(item, path)
		if err != nil {
			return err
		}
		if err := decodeMapping(item, v, path); err != nil {
			return err
		}
	}
	return nil
}

func decodeList(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return shapeError(n, path, v.Type())
	}
	list := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		elem := reflect.New(v.Type().Elem()).Elem()
		if err := applyDefaults(elem); err != nil {
			return err
		}
		if err := decodeNode(item, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
		list = reflect.Append(list, elem)
	}
	v.Set(list)
	return nil
}

// fieldByName returns the field of struct type t whose yaml name is name.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.IsExported() && yamlName(sf) == name {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

func followAlias(n *yaml.Node, path string) (*yaml.Node, error) {
	for range maxAliasDepth {
		if n.Kind != yaml.AliasNode {
			return n, nil
		}
		if n.Alias == nil {
			break
		}
		n = n.Alias
	}
	return nil, &KeyError{Key: path, Source: lineOf(n), Err: fmt.Errorf("%w: unresolvable alias", ErrWrongShape)}
}

func shapeError(n *yaml.Node, path string, want reflect.Type) error {
	return &KeyError{Key: path, Source: lineOf(n), Err: fmt.Errorf("%w: want a %s, got a %s", ErrWrongShape, typeName(want), nodeKindName(n))}
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "document"
}

func lineOf(n *yaml.Node) string {
	return fmt.Sprintf("line %d", n.Line)
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
