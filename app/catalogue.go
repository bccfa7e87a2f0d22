package app

import (
	"context"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// lastRecordedWithin is how far back a camera that starts looks for its
// last stored segment (a crash of the node that recorded it).
const lastRecordedWithin = 24 * time.Hour

// startCatalogue builds the node's catalogue, through which every reader
// of recordings finds them (API, player, export, snapshots, the page):
// its look-back follows recording.segment_duration, and its init size
// cache is filled from the segment notices of the whole cluster.
func (a *App) startCatalogue() {
	a.cat = catalogue.New(catalogue.Config{
		Store:      a.store,
		MaxSegment: segmenter.MaxSegmentDuration(time.Duration(a.cfg.Recording.SegmentDuration)),
	})
	stop, err := a.bus.WatchSegments(func(n bus.SegmentNotice) { a.cat.NoteInitSize(n.Key, n.InitSize) })
	if err != nil {
		a.log.Warn("segment notices not watched: init sizes are read from storage", zap.Error(err))
		return
	}
	a.stopWatch = stop
}

// Catalogue returns the node's catalogue of recordings.
func (a *App) Catalogue() *catalogue.Catalogue { return a.cat }

// startJournal starts the writer of gap records, beside the segments and on
// NATS (docs/recording.md, Gaps): the recorder's, and the API's when it
// blocks a client.
func (a *App) startJournal() {
	a.journal = catalogue.NewJournal(catalogue.JournalConfig{
		Store:   a.store,
		Node:    a.cfg.NodeID,
		Publish: a.outbox.EnqueueGap,
		Attrs:   a.objectAttrs,
		Log:     a.log.With(zap.String("component", "gaps")),
	})
}

// closeJournal writes the records left, for up to 5 s.
func (a *App) closeJournal() {
	if a.journal == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.journal.Close(ctx)
}

// objectAttrs returns the retention metadata and tag a camera's objects
// carry.
func (a *App) objectAttrs(ctx context.Context, camera string) (meta, tags map[string]string) {
	days := a.retentionDays(ctx, camera)
	if days <= 0 {
		return nil, nil
	}
	d := strconv.Itoa(days)
	return map[string]string{storage.MetaRetentionDays: d}, map[string]string{storage.TagRetentionDays: d}
}

// recordGap is the recorder's OnGap: the journal writes the record.
func (a *App) recordGap(g status.Gap) {
	if a.metrics != nil {
		a.metrics.GapRecords.WithLabelValues(string(g.Cause)).Inc()
	}
	a.journal.Record(g)
}

// segmentDropped records the gap a segment the spool dropped leaves.
func (a *App) segmentDropped(seg segmenter.Segment, reason string) {
	cause := status.CauseSpoolQuota
	if reason == "upload_failed" {
		cause = status.CauseUploadFailed
	}
	a.recordGap(status.Gap{Camera: seg.Camera, StartMs: seg.StartMs(), EndMs: seg.End().UnixMilli(), Cause: cause, Detail: reason, Node: a.cfg.NodeID})
}

// lastRecorded is the recorder's LastRecorded: the end of the camera's last
// stored segment within a day, and whether a gap record follows it.
func (a *App) lastRecorded(ctx context.Context, id string) (time.Time, bool, error) {
	l, err := a.cat.LastBefore(ctx, id, time.Now(), lastRecordedWithin)
	return l.End, l.GapAfter, err
}
