package storage

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigia/vigia/camera"
)

// MaxKeyLen is the longest key a Store accepts, in bytes.
const MaxKeyLen = 1024

// ValidCameraID reports whether id can name a camera in a key, by the one
// camera id rule (camera.ValidID: 1 to camera.MaxIDLen characters of
// [A-Za-z0-9_-]). Such an id cannot leave its key prefix.
func ValidCameraID(id string) bool {
	return validID(id)
}

// validID reports whether id can name a camera, an event or a video in a
// key: event and video ids follow the camera id rule.
func validID(id string) bool {
	return camera.ValidID(id) == nil
}

// ValidateKey checks that key is a relative, clean object key: 1 to MaxKeyLen
// bytes, '/'-separated segments that are neither empty nor start with '.',
// and no control characters or backslashes. Refusals wrap ErrInvalidKey.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	}
	if err := validChars(key); err != nil {
		return err
	}
	for seg := range strings.SplitSeq(key, "/") {
		if err := validSegment(seg); err != nil {
			return fmt.Errorf("%w in %q", err, key)
		}
	}
	return nil
}

// ValidatePrefix checks a listing prefix: "" (everything), or the start of a
// key whose complete segments pass ValidateKey's rules. The last segment may
// be partial or empty (a prefix ending in '/'), but may not start with '.'.
// Refusals wrap ErrInvalidKey.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if len(prefix) > MaxKeyLen {
		return fmt.Errorf("%w: prefix longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	}
	if err := validChars(prefix); err != nil {
		return err
	}
	segs := strings.Split(prefix, "/")
	for i, seg := range segs {
		if i == len(segs)-1 && seg == "" && i > 0 {
			break // trailing '/'
		}
		if err := validSegment(seg); err != nil {
			return fmt.Errorf("%w in prefix %q", err, prefix)
		}
	}
	return nil
}

func validChars(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("%w: character %#x at %d", ErrInvalidKey, c, i)
		}
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	}
	return nil
}

func validSegment(seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("%w: empty segment", ErrInvalidKey)
	case seg[0] == '.':
		return fmt.Errorf("%w: segment %q starts with '.'", ErrInvalidKey, seg)
	}
	return nil
}
