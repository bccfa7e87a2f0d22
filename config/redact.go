package config

import (
	"reflect"

	"github.com/vigia/vigia/logging"
)

// RedactedText replaces the value of a non-empty secret key in Redacted.
const RedactedText = "REDACTED"

// Redacted returns a copy of c that is safe to print or log: keys tagged
// secret:"true" are replaced by RedactedText when set, and URLs tagged
// secret:"url" (camera URLs, database.url) lose their password and token
// query parameters.
func (c *Config) Redacted() *Config {
	out := *c
	out.Cameras = append([]Camera(nil), c.Cameras...)
	redactValue(reflect.ValueOf(&out).Elem())
	return &out
}

// redactValue redacts the secret keys of struct v in place, descending into
// sections and the elements of lists (which must not share memory with the
// original).
func redactValue(v reflect.Value) {
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if f.list {
			for i := range fv.Len() {
				redactValue(fv.Index(i))
			}
			continue
		}
		if fv.Kind() != reflect.String || fv.String() == "" {
			continue
		}
		switch f.field.Tag.Get("secret") {
		case "true":
			fv.SetString(RedactedText)
		case "url":
			fv.SetString(logging.RedactURL(fv.String()))
		}
	}
}
