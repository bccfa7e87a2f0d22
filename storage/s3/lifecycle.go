package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"github.com/vigia/vigia/storage"
)

var _ storage.Lifecycle = (*S3)(nil)

// ExpiryRules returns the bucket's enabled expiry rules whose ID starts with
// storage.ExpiryRulePrefix, sorted by ID.
func (s *S3) ExpiryRules(ctx context.Context) ([]storage.ExpiryRule, error) {
	cfg, err := s.lifecycle(ctx)
	if err != nil {
		return nil, err
	}
	var out []storage.ExpiryRule
	for _, r := range cfg.Rules {
		if !strings.HasPrefix(r.ID, storage.ExpiryRulePrefix) || r.Status != "Enabled" {
			continue
		}
		out = append(out, fromRule(r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SetExpiryRules replaces the bucket's rules whose ID starts with
// storage.ExpiryRulePrefix by rules and keeps every other rule.
func (s *S3) SetExpiryRules(ctx context.Context, rules []storage.ExpiryRule) error {
	cfg, err := s.lifecycle(ctx)
	if err != nil {
		return err
	}
	next := lifecycle.NewConfiguration()
	for _, r := range cfg.Rules {
		if !strings.HasPrefix(r.ID, storage.ExpiryRulePrefix) {
			next.Rules = append(next.Rules, r)
		}
	}
	for _, r := range rules {
		if !strings.HasPrefix(r.ID, storage.ExpiryRulePrefix) || r.Days <= 0 {
			return fmt.Errorf("s3 lifecycle: rule %q: id must start with %q and days be positive", r.ID, storage.ExpiryRulePrefix)
		}
		next.Rules = append(next.Rules, toRule(r))
	}
	err = s.do(ctx, "set lifecycle", "", func() error {
		return s.client.SetBucketLifecycle(ctx, s.bucket, next)
	})
	if err != nil {
		return fmt.Errorf("s3 lifecycle %s: %w", s.desc, mapLifecycleErr(err))
	}
	return nil
}

// lifecycle reads the bucket's lifecycle configuration; a bucket without
// one has an empty configuration.
func (s *S3) lifecycle(ctx context.Context) (*lifecycle.Configuration, error) {
	var cfg *lifecycle.Configuration
	err := s.do(ctx, "get lifecycle", "", func() error {
		var err error
		cfg, err = s.client.GetBucketLifecycle(ctx, s.bucket)
		return err
	})
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.Code == "NoSuchLifecycleConfiguration" {
		return lifecycle.NewConfiguration(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("s3 lifecycle %s: %w", s.desc, mapLifecycleErr(err))
	}
	return cfg, nil
}

// mapLifecycleErr wraps storage.ErrNoLifecycle around the answers of
// services without lifecycle support.
func mapLifecycleErr(err error) error {
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.Code == "NotImplemented" || er.StatusCode == http.StatusNotImplemented) {
		return fmt.Errorf("%w: %w", storage.ErrNoLifecycle, err)
	}
	return err
}

func toRule(r storage.ExpiryRule) lifecycle.Rule {
	lr := lifecycle.Rule{
		ID:         r.ID,
		Status:     "Enabled",
		Expiration: lifecycle.Expiration{Days: lifecycle.ExpirationDays(r.Days)},
	}
	switch {
	case r.TagKey != "" && r.Prefix != "":
		lr.RuleFilter = lifecycle.Filter{And: lifecycle.And{Prefix: r.Prefix, Tags: []lifecycle.Tag{{Key: r.TagKey, Value: r.TagValue}}}}
	case r.TagKey != "":
		lr.RuleFilter = lifecycle.Filter{Tag: lifecycle.Tag{Key: r.TagKey, Value: r.TagValue}}
	default:
		lr.RuleFilter = lifecycle.Filter{Prefix: r.Prefix}
	}
	return lr
}

func fromRule(lr lifecycle.Rule) storage.ExpiryRule {
	r := storage.ExpiryRule{ID: lr.ID, Days: int(lr.Expiration.Days)}
	f := lr.RuleFilter
	switch {
	case !f.And.IsEmpty():
		r.Prefix = f.And.Prefix
		if len(f.And.Tags) > 0 {
			r.TagKey, r.TagValue = f.And.Tags[0].Key, f.And.Tags[0].Value
		}
	case !f.Tag.IsEmpty():
		r.TagKey, r.TagValue = f.Tag.Key, f.Tag.Value
	default:
		r.Prefix = f.Prefix
		if r.Prefix == "" {
			r.Prefix = lr.Prefix
		}
	}
	return r
}
