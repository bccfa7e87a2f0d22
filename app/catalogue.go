package app

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// startCatalogue builds the node's catalogue, through which every reader
// of recordings finds them (API, player, export, snapshots, the page):
// its look-back follows recording.segment_duration, and its init size
// cache is filled from the segment notices of the whole cluster.
func (a *App) startCatalogue() {
	a.cat = catalogue.New(catalogue.Config{
		Store:      a.store,
		MaxSegment: storage.MaxSegmentDuration(time.Duration(a.cfg.Recording.SegmentDuration)),
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
	a.days = a.retentionRule()
	a.journal = catalogue.NewJournal(catalogue.JournalConfig{
		Store:   a.store,
		Node:    a.cfg.NodeID,
		Publish: a.outbox.EnqueueGap,
		Attrs:   a.days.Attrs,
		Log:     a.log.With(zap.String("component", "gaps")),
	})
	if a.mode.Recorder {
		metrics.RegisterGapJournal(a.reg, func() float64 { return float64(a.journal.Stats().Dropped) })
	}
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

// recordGap is the API's OnGap: the journal writes the record.
func (a *App) recordGap(g status.Gap) {
	if a.metrics != nil {
		a.metrics.GapRecords.WithLabelValues(string(g.Cause)).Inc()
	}
	a.journal.Record(g)
}

// catalogueSegments gives the recorder the last stored segment of a
// camera.
type catalogueSegments struct{ cat *catalogue.Catalogue }

func (s catalogueSegments) LastBefore(ctx context.Context, id string, t time.Time, within time.Duration) (time.Time, bool, error) {
	l, err := s.cat.LastBefore(ctx, id, t, within)
	return l.End, l.GapAfter, err
}

// recorded returns the completeness of a camera recorded here.
func (a *App) recorded(camera string) (status.Completeness, bool) {
	if a.rec == nil {
		return status.Completeness{}, false
	}
	return a.rec.Recorded(camera)
}
