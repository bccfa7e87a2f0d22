package s3

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/minio/minio-go/v7"

	"github.com/vigia/vigia/storage"
)

// Errors of the s3 store, besides those of package storage.
var (
	// ErrNoEndpoint means Options.Endpoint is empty.
	ErrNoEndpoint = errors.New("no endpoint")
	// ErrBadEndpoint means Options.Endpoint is a URL other than scheme://host[:port].
	ErrBadEndpoint = errors.New("endpoint must be host:port or http(s)://host:port")
	// ErrNoBucket means no bucket was named, or the bucket does not exist.
	ErrNoBucket = errors.New("bucket missing")
	// ErrChecksum means Options.Checksum is neither crc32c nor sha256.
	ErrChecksum = errors.New("unknown upload checksum")
	// ErrDelimiter means a listing asked for a delimiter other than "/".
	ErrDelimiter = errors.New("only \"/\" is supported as delimiter")
)

// isInvalidRange reports whether err wraps storage.ErrInvalidRange.
func isInvalidRange(err error) bool { return errors.Is(err, storage.ErrInvalidRange) }

// mapErr wraps err with the operation and key, turning S3's missing object
// and unsatisfiable range into the storage sentinels.
func mapErr(op, key string, err error) error {
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		switch {
		case er.Code == "NoSuchKey" || er.StatusCode == http.StatusNotFound && er.Code != "NoSuchBucket":
			return fmt.Errorf("s3 %s %q: %w", op, key, storage.ErrNotFound)
		case er.Code == "InvalidRange" || er.StatusCode == http.StatusRequestedRangeNotSatisfiable:
			return fmt.Errorf("s3 %s %q: %w", op, key, storage.ErrInvalidRange)
		}
	}
	return fmt.Errorf("s3 %s %q: %w", op, key, err)
}
