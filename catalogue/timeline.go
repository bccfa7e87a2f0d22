package catalogue

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// Span is a stretch of time, [StartMs, EndMs) in Unix milliseconds.
type Span struct {
	StartMs int64 `json:"start_ms"`
	EndMs   int64 `json:"end_ms"`
}

// Gap is a stretch of time without recording and why.
type Gap struct {
	StartMs int64        `json:"start_ms"`
	EndMs   int64        `json:"end_ms"`
	Cause   status.Cause `json:"cause"`
}

// Timeline is what a camera recorded in a range: the spans covered by
// stored segments and the gaps between them, each with its cause.
type Timeline struct {
	// FromMs and ToMs bound the range.
	FromMs int64 `json:"from_ms"`
	ToMs   int64 `json:"to_ms"`
	// Recorded are the spans covered by segments, merged where segments
	// touch, clipped to the range.
	Recorded []Span `json:"recorded"`
	// Gaps are the stretches of the range up to now that no segment
	// covers, split where the cause changes. The stretch after the last
	// segment while it is shorter than a segment (still being recorded)
	// is not a gap unless a record explains it.
	Gaps []Gap `json:"gaps"`
	// RecordedMs is the time the spans cover.
	RecordedMs int64 `json:"recorded_ms"`
}

// TimelineOptions tune Timeline.
type TimelineOptions struct {
	// RetainedFrom is where the camera's retention (history_days) begins:
	// a gap before it that no record explains has CauseRetention. Zero:
	// no retention.
	RetainedFrom time.Time
	// LookBack is how far before the range Timeline looks for the record
	// explaining a gap the range starts in (hours are listed one by one,
	// newest first, until one holds anything). It defaults to 24 hours.
	LookBack time.Duration
}

// Timeline returns camera's timeline of [from, to).
func (c *Catalogue) Timeline(ctx context.Context, camera string, from, to time.Time, opts TimelineOptions) (Timeline, error) {
	if opts.LookBack <= 0 {
		opts.LookBack = 24 * time.Hour
	}
	var segs []Segment
	var recs []GapRecord
	for h, err := range c.Range(ctx, camera, from, to) {
		if err != nil {
			return Timeline{}, err
		}
		segs = append(segs, h.Segments...)
		recs = append(recs, h.Gaps...)
	}
	fromMs := from.UnixMilli()
	startsInGap := len(segs) == 0 || segs[0].StartMs > fromMs+storage.TouchToleranceMs
	explained := slices.ContainsFunc(recs, func(g GapRecord) bool { return g.StartMs <= fromMs })
	if startsInGap && !explained {
		before, err := c.recordsBefore(ctx, camera, c.firstHour(from).Add(-time.Hour), opts.LookBack)
		if err != nil {
			return Timeline{}, err
		}
		recs = append(before, recs...)
	}
	var retained int64
	if !opts.RetainedFrom.IsZero() {
		retained = opts.RetainedFrom.UnixMilli()
	}
	inProgress := (c.cfg.MaxSegment + 30*time.Second).Milliseconds()
	return buildTimeline(fromMs, to.UnixMilli(), c.cfg.Now().UnixMilli(), segs, recs, retained, inProgress), nil
}

// recordsBefore looks back from the hour holding t, at most within, for
// the newest hour holding anything, and returns its gap records that start
// after its last segment ends: what explains a gap that lasts beyond it.
func (c *Catalogue) recordsBefore(ctx context.Context, camera string, t time.Time, within time.Duration) ([]GapRecord, error) {
	stop := t.Add(-within)
	for h := t.UTC().Truncate(time.Hour); !h.Before(stop); h = h.Add(-time.Hour) {
		hour, err := c.listHour(ctx, camera, h)
		if err != nil {
			return nil, err
		}
		if len(hour.Segments) == 0 && len(hour.Gaps) == 0 {
			continue
		}
		var endMs int64
		for _, s := range hour.Segments {
			endMs = max(endMs, s.EndMs())
		}
		var out []GapRecord
		for _, g := range hour.Gaps {
			if g.StartMs >= endMs-storage.TouchToleranceMs {
				out = append(out, g)
			}
		}
		return out, nil
	}
	return nil, nil
}

// effRecord is a gap record with the span it explains.
type effRecord struct {
	start, end int64
	rank       int
	cause      status.Cause
}

// buildTimeline computes the timeline of [fromMs, toMs) from segments and
// gap records, now being nowMs. An open record explains up to the next
// segment's start (or now); where records overlap, the cause ranked first
// (status.Cause.Rank) wins, then the record that starts last. A gap no
// record explains is CauseRetention before retainedMs, CauseUnknown after.
// A gap reaching now, shorter than inProgressMs and explained by no record
// is the segment being recorded, and left out.
func buildTimeline(fromMs, toMs, nowMs int64, segs []Segment, recs []GapRecord, retainedMs, inProgressMs int64) Timeline {
	tl := Timeline{FromMs: fromMs, ToMs: toMs, Recorded: []Span{}, Gaps: []Gap{}}
	segs = slices.Clone(segs)
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].StartMs < segs[j].StartMs })
	for _, s := range segs {
		a, b := max(s.StartMs, fromMs), min(s.EndMs(), toMs)
		if b <= a {
			continue
		}
		if n := len(tl.Recorded); n > 0 && a <= tl.Recorded[n-1].EndMs+storage.TouchToleranceMs {
			tl.Recorded[n-1].EndMs = max(tl.Recorded[n-1].EndMs, b)
			continue
		}
		tl.Recorded = append(tl.Recorded, Span{a, b})
	}
	for _, sp := range tl.Recorded {
		tl.RecordedMs += sp.EndMs - sp.StartMs
	}

	// Holes: the range up to now that no span covers.
	end := min(toMs, nowMs)
	var holes []Span
	at := fromMs
	for _, sp := range tl.Recorded {
		if sp.StartMs > at && at < end {
			holes = append(holes, Span{at, min(sp.StartMs, end)})
		}
		at = max(at, sp.EndMs)
	}
	if at < end {
		holes = append(holes, Span{at, end})
	}

	// What each record explains.
	eff := make([]effRecord, 0, len(recs))
	for _, g := range recs {
		e := effRecord{start: g.StartMs, end: g.StartMs + g.DurMs, rank: g.Cause.Rank(), cause: g.Cause}
		if g.Open() {
			e.end = nowMs
			i := sort.Search(len(segs), func(i int) bool { return segs[i].StartMs > g.StartMs })
			if i < len(segs) {
				e.end = min(e.end, segs[i].StartMs)
			}
		}
		if e.end > e.start && g.Cause.Known() {
			eff = append(eff, e)
		}
	}
	sort.Slice(eff, func(i, j int) bool { return eff[i].start < eff[j].start })

	next := 0 // eff[:next] started before the current hole's end
	var active []effRecord
	for hi, h := range holes {
		for next < len(eff) && eff[next].start < h.EndMs {
			active = append(active, eff[next])
			next++
		}
		active = slices.DeleteFunc(active, func(e effRecord) bool { return e.end <= h.StartMs })
		var cands []effRecord
		cuts := []int64{h.StartMs, h.EndMs}
		if retainedMs > h.StartMs && retainedMs < h.EndMs {
			cuts = append(cuts, retainedMs)
		}
		for _, e := range active {
			if e.end > h.StartMs && e.start < h.EndMs {
				// Keys round to the millisecond: a record that starts or
				// ends within the tolerance of the gap's edge explains it
				// from that edge.
				if e.start-h.StartMs <= storage.TouchToleranceMs {
					e.start = min(e.start, h.StartMs)
				}
				if h.EndMs-e.end <= storage.TouchToleranceMs {
					e.end = max(e.end, h.EndMs)
				}
				cands = append(cands, e)
				cuts = append(cuts, max(e.start, h.StartMs), min(e.end, h.EndMs))
			}
		}
		if len(cands) == 0 && hi == len(holes)-1 && h.EndMs == nowMs && h.EndMs-h.StartMs < inProgressMs {
			continue // the segment being recorded
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		for k := 0; k+1 < len(cuts); k++ {
			p, q := cuts[k], cuts[k+1]
			cause := status.CauseUnknown
			if q <= retainedMs {
				cause = status.CauseRetention
			}
			best := -1
			for i, e := range cands {
				if e.start <= p && e.end >= q && (best < 0 || e.rank < cands[best].rank ||
					e.rank == cands[best].rank && e.start > cands[best].start) {
					best = i
				}
			}
			if best >= 0 {
				cause = cands[best].cause
			}
			if n := len(tl.Gaps); n > 0 && tl.Gaps[n-1].Cause == cause && tl.Gaps[n-1].EndMs == p {
				tl.Gaps[n-1].EndMs = q
				continue
			}
			tl.Gaps = append(tl.Gaps, Gap{StartMs: p, EndMs: q, Cause: cause})
		}
	}
	return tl
}

// Ratio returns the share of the range up to now that segments cover, 0
// to 1 (1 for an empty range).
func (t Timeline) Ratio(nowMs int64) float64 {
	span := min(t.ToMs, nowMs) - t.FromMs
	if span <= 0 {
		return 1
	}
	return min(1, float64(t.RecordedMs)/float64(span))
}
