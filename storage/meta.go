package storage

import (
	"fmt"
	"mime"
	"path"
	"strings"
)

// Metadata names Vigia stores with objects. Values are decimal strings.
const (
	// MetaCamera is the camera id the object belongs to.
	MetaCamera = "camera"
	// MetaStartMs is a recording segment's wall-clock start, Unix milliseconds.
	MetaStartMs = "start-ms"
	// MetaDurationMs is a recording segment's duration in milliseconds.
	MetaDurationMs = "duration-ms"
	// MetaRetentionDays is the camera's history_days when the object was written.
	MetaRetentionDays = "retention-days"
)

// TagRetentionDays is the object tag carrying the camera's history_days,
// matched by lifecycle rules where the store has them.
const TagRetentionDays = "retention-days"

// Limits on user metadata and tags, those of S3.
const (
	maxMetadataBytes = 2048
	maxTags          = 10
	maxTagKeyLen     = 128
	maxTagValueLen   = 256
)

// NormalizeMetadata checks user metadata and returns a copy with lower-case
// keys. Keys must be [A-Za-z0-9-] (case is dropped), values printable ASCII,
// and all of it at most 2 KiB. Refusals wrap ErrInvalidMetadata.
func NormalizeMetadata(md map[string]string) (map[string]string, error) {
	if len(md) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(md))
	total := 0
	for k, v := range md {
		lk := strings.ToLower(k)
		if lk == "" || !allBytes(lk, isMetaKeyByte) {
			return nil, fmt.Errorf("%w: key %q", ErrInvalidMetadata, k)
		}
		if !allBytes(v, isPrintableASCII) {
			return nil, fmt.Errorf("%w: value of %q is not printable ASCII", ErrInvalidMetadata, k)
		}
		if _, dup := out[lk]; dup {
			return nil, fmt.Errorf("%w: key %q given twice", ErrInvalidMetadata, lk)
		}
		out[lk] = v
		total += len(lk) + len(v)
	}
	if total > maxMetadataBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidMetadata, total, maxMetadataBytes)
	}
	return out, nil
}

// ValidateTags checks object tags against the S3 rules: at most 10 tags,
// keys of 1 to 128 and values of up to 256 characters among letters, digits,
// space and + - = . _ : / @. Refusals wrap ErrInvalidMetadata.
func ValidateTags(tags map[string]string) error {
	if len(tags) > maxTags {
		return fmt.Errorf("%w: %d tags, more than %d", ErrInvalidMetadata, len(tags), maxTags)
	}
	for k, v := range tags {
		if k == "" || len(k) > maxTagKeyLen || !allBytes(k, isTagByte) {
			return fmt.Errorf("%w: tag key %q", ErrInvalidMetadata, k)
		}
		if len(v) > maxTagValueLen || !allBytes(v, isTagByte) {
			return fmt.Errorf("%w: value of tag %q", ErrInvalidMetadata, k)
		}
	}
	return nil
}

// ContentTypeFor returns given when it is not empty, otherwise the media type
// of key's extension (video/mp4, image/jpeg, ...), or application/octet-stream.
func ContentTypeFor(key, given string) string {
	if given != "" {
		return given
	}
	ext := strings.ToLower(path.Ext(key))
	switch ext {
	case ".mp4", ".m4s":
		return "video/mp4"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".m3u8":
		return "application/vnd.apple.mpegurl"
	case ".json":
		return "application/json"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isMetaKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

func isPrintableASCII(c byte) bool { return c >= 0x20 && c < 0x7f }

func isTagByte(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte(" +-=._:/@", c) >= 0
}
