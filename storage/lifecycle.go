package storage

import (
	"context"
	"errors"
)

// ErrNoLifecycle means the store (or the S3 service behind it) does not
// support lifecycle rules; retention then relies on its sweeper alone. It
// lives here, beside the optional interface it belongs to.
var ErrNoLifecycle = errors.New("lifecycle rules not supported")

// ExpiryRulePrefix starts the ID of every lifecycle rule Vigia owns. Rules
// with other IDs are never changed.
const ExpiryRulePrefix = "vigia-"

// ExpiryRule is one lifecycle rule that deletes objects some days after they
// were written. An object matches when its key starts with Prefix (empty:
// any key) and, when TagKey is set, it carries the tag TagKey=TagValue.
type ExpiryRule struct {
	// ID names the rule; Vigia's rules start with ExpiryRulePrefix.
	ID string
	// Prefix limits the rule to keys starting with it; empty matches all keys.
	Prefix string
	// TagKey and TagValue, when TagKey is set, limit the rule to objects with that tag.
	TagKey, TagValue string
	// Days after an object's creation when it expires (S3 rounds the
	// moment up to the next midnight UTC).
	Days int
}

// Lifecycle is implemented by stores that can keep expiry rules that the
// service itself enforces (S3 lifecycle configuration).
type Lifecycle interface {
	// ExpiryRules returns the enabled expiry rules of the bucket whose ID
	// starts with ExpiryRulePrefix, sorted by ID. It wraps ErrNoLifecycle when
	// the service does not support lifecycle rules.
	ExpiryRules(ctx context.Context) ([]ExpiryRule, error)
	// SetExpiryRules replaces the bucket's rules whose ID starts with
	// ExpiryRulePrefix by rules, keeping every other rule as it is. It wraps
	// ErrNoLifecycle when the service does not support lifecycle rules.
	SetExpiryRules(ctx context.Context, rules []ExpiryRule) error
}
