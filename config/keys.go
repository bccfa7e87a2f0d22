package config

import (
	"reflect"
	"strings"
)

// Key describes one configuration key.
type Key struct {
	Path    string // YAML path, "cameras[].id" for a field of list elements
	Env     string // environment variable; "" for keys set in the file only
	Flag    string // flag name without dashes; "" for keys set in the file only
	Default string // default as written in the file; "" when empty or derived
	Doc     string // meaning, including derived defaults
	Type    string // string, bool, integer, number, duration, size or list
	Secret  bool   // redacted by Config.Redacted
}

// Keys lists every configuration key in declaration order, the fields of
// list elements after their list.
func Keys() []Key {
	var keys []Key
	for _, f := range fieldsOf(reflect.TypeFor[Config]()) {
		k := keyOf(f, f.path)
		if !f.list {
			k.Env, k.Flag = EnvName(f.path), f.path
			keys = append(keys, k)
			continue
		}
		keys = append(keys, k)
		for _, sub := range fieldsOf(f.field.Type.Elem()) {
			keys = append(keys, keyOf(sub, f.path+"[]."+sub.path))
		}
	}
	return keys
}

func keyOf(f fieldInfo, path string) Key {
	return Key{
		Path:    path,
		Default: f.field.Tag.Get("default"),
		Doc:     f.field.Tag.Get("doc"),
		Type:    typeName(f.field.Type),
		Secret:  f.field.Tag.Get("secret") != "",
	}
}

// Markdown returns the reference table of every key, as it appears in
// docs/config.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| key | type | default | environment / flag | meaning |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, k := range Keys() {
		def := "`" + k.Default + "`"
		if k.Default == "" {
			def = ""
		}
		where := "file only"
		if k.Env != "" {
			where = "`" + k.Env + "`<br>`--" + k.Flag + "`"
		}
		doc := k.Doc
		if k.Secret {
			doc += " Secret: redacted when printed."
		}
		b.WriteString("| `" + k.Path + "` | " + k.Type + " | " + def + " | " + where + " | " +
			strings.ReplaceAll(doc, "|", `\|`) + " |\n")
	}
	return b.String()
}
