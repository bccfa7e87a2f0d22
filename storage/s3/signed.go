package s3

import (
	"context"
	"fmt"
	"time"

	"github.com/vigia/vigia/storage"
)

// maxPresignExpiry is the longest expiry S3 presigned URLs allow.
const maxPresignExpiry = 7 * 24 * time.Hour

// SignedURL returns a presigned GET URL valid for expiry (1 second to 7 days).
func (s *S3) SignedURL(ctx context.Context, key string, expiry time.Duration) (string, error) {
	if err := storage.ValidateKey(key); err != nil {
		return "", fmt.Errorf("s3 signed url: %w", err)
	}
	if expiry < time.Second || expiry > maxPresignExpiry {
		return "", fmt.Errorf("s3 signed url %q: %v: %w", key, expiry, storage.ErrInvalidExpiry)
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, expiry, nil)
	if err != nil {
		return "", fmt.Errorf("s3 signed url %q: %w", key, err)
	}
	return u.String(), nil
}
