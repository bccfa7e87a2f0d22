package retention

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
)

// Rule IDs.
const (
	// RetentionRulePrefix starts the ID of a camera retention rule, followed
	// by the days: "vigia-retention-7d".
	RetentionRulePrefix = storage.ExpiryRulePrefix + "retention-"
	// VideosRuleID is the ID of the downloadable videos rule.
	VideosRuleID = storage.ExpiryRulePrefix + "videos"
)

// RetentionRule returns the lifecycle rule expiring objects tagged with
// storage.TagRetentionDays = days, days days after they were written.
func RetentionRule(days int) storage.ExpiryRule {
	v := strconv.Itoa(days)
	return storage.ExpiryRule{
		ID:     RetentionRulePrefix + v + "d",
		TagKey: storage.TagRetentionDays, TagValue: v,
		Days: days,
	}
}

// DesiredRules returns the rules to keep: the current Vigia rules, plus one
// retention rule for each positive days value of cams, plus the videos rule
// when videosMaxAge is positive (a whole number of days, rounded up). A
// retention rule is never removed, because objects written under an older
// plan still carry its tag; a camera whose plan shrank has those objects
// deleted by the sweep instead. The result is sorted by ID.
func DesiredRules(current []storage.ExpiryRule, cams []CameraRetention, videosMaxAge time.Duration) []storage.ExpiryRule {
	byID := map[string]storage.ExpiryRule{}
	for _, r := range current {
		if r.ID != VideosRuleID {
			byID[r.ID] = r
		}
	}
	for _, c := range cams {
		if c.Days > 0 {
			r := RetentionRule(c.Days)
			byID[r.ID] = r
		}
	}
	if videosMaxAge > 0 {
		days := int((videosMaxAge + 24*time.Hour - 1) / (24 * time.Hour))
		byID[VideosRuleID] = storage.ExpiryRule{ID: VideosRuleID, Prefix: storage.PrefixVideos, Days: days}
	}
	out := make([]storage.ExpiryRule, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b storage.ExpiryRule) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// EnsureRules installs the lifecycle rules for cams when Config.Lifecycle
// is set and the store implements storage.Lifecycle. It writes only when
// the rules differ. A store without lifecycle support is remembered and
// not asked again.
func (s *Sweeper) EnsureRules(ctx context.Context, cams []CameraRetention) error {
	lc, ok := s.cfg.Store.(storage.Lifecycle)
	if !s.cfg.Lifecycle || !ok || s.rulesOff.Load() {
		return nil
	}
	current, err := lc.ExpiryRules(ctx)
	if err == nil {
		want := DesiredRules(current, cams, s.cfg.VideosMaxAge)
		if slices.Equal(current, want) {
			return nil
		}
		if err = lc.SetExpiryRules(ctx, want); err == nil {
			s.cfg.Log.Info("lifecycle rules installed", zap.Int("rules", len(want)))
			return nil
		}
	}
	if errors.Is(err, storage.ErrNoLifecycle) {
		s.rulesOff.Store(true)
		s.cfg.Log.Info("store has no lifecycle rules; the sweeper alone expires objects", zap.Error(err))
		return nil
	}
	return fmt.Errorf("lifecycle rules: %w", err)
}
