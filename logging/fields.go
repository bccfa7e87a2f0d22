package logging

import "go.uber.org/zap"

// URL returns a string field holding raw with its secrets redacted by
// RedactURL.
func URL(key, raw string) zap.Field {
	return zap.String(key, RedactURL(raw))
}

// Component returns the field that names the component a logger belongs to.
func Component(name string) zap.Field {
	return zap.String("component", name)
}

// Camera returns the field that names the camera a logger or entry is about.
func Camera(id string) zap.Field {
	return zap.String("camera", id)
}
