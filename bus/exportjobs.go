package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Export job names.
const (
	// BucketExports holds the state of each export (downloadable video) job,
	// key = job id; written by the node running the job, read by the API.
	BucketExports = "exports"
	// ConsumerExport is the durable pull consumer of StreamJobs shared by
	// every node that runs export jobs.
	ConsumerExport = "export"
)

// jobFetchWait bounds one pull request; Next loops until its context ends.
const jobFetchWait = 5 * time.Second

// PublishExportJob publishes data on SubjectJobsExport (stream JOBS) with
// msgID as Nats-Msg-Id, so a retry within DuplicateWindow is stored once.
func (b *Bus) PublishExportJob(ctx context.Context, msgID string, data []byte) error {
	if err := b.usable(); err != nil {
		return fmt.Errorf("publish export job %s: %w", msgID, err)
	}
	if msgID == "" || len(data) == 0 {
		return fmt.Errorf("publish export job: %w: empty id or data", ErrInvalidMessage)
	}
	if _, err := b.js.Publish(ctx, SubjectJobsExport, data, jetstream.WithMsgID(msgID)); err != nil {
		return fmt.Errorf("publish export job %s: %w", msgID, err)
	}
	return nil
}

// JobConsumer pulls export jobs from the shared durable consumer of
// StreamJobs. Each job goes to one puller; a job not acknowledged within
// the ack wait (a node killed mid-job) is delivered again, to any node.
type JobConsumer struct {
	cons jetstream.Consumer
}

// ExportJobs creates or updates the durable consumer ConsumerExport with
// the given ack wait (a running job must call InProgress more often than
// that) and returns a puller on it.
func (b *Bus) ExportJobs(ctx context.Context, ackWait time.Duration) (*JobConsumer, error) {
	if err := b.usable(); err != nil {
		return nil, fmt.Errorf("export consumer: %w", err)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, StreamJobs, jetstream.ConsumerConfig{
		Durable:       ConsumerExport,
		Description:   "export jobs, shared by every export node",
		FilterSubject: SubjectJobsExport,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxAckPending: 1000,
	})
	if err != nil {
		return nil, fmt.Errorf("export consumer: %w", err)
	}
	return &JobConsumer{cons: cons}, nil
}

// Next waits for the next job until ctx ends (then it returns ctx's error).
func (c *JobConsumer) Next(ctx context.Context) (*JobMsg, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fctx, cancel := context.WithTimeout(ctx, jobFetchWait)
		m, err := c.cons.Next(jetstream.FetchContext(fctx))
		cancel()
		switch {
		case err == nil:
			return &JobMsg{m: m}, nil
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
			continue
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrNoResponders):
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		return nil, fmt.Errorf("next export job: %w", err)
	}
}

// JobMsg is one delivered export job.
type JobMsg struct {
	m jetstream.Msg
}

// Data returns the job's payload.
func (j *JobMsg) Data() []byte { return j.m.Data() }

// Delivered returns how many times the job has been delivered, this time included.
func (j *JobMsg) Delivered() uint64 {
	md, err := j.m.Metadata()
	if err != nil {
		return 1
	}
	return md.NumDelivered
}

// Ack removes the job from the work queue; call it when the job is done
// (succeeded or failed for good).
func (j *JobMsg) Ack() error { return j.m.Ack() }

// Nak hands the job back for another delivery after delay.
func (j *JobMsg) Nak(delay time.Duration) error { return j.m.NakWithDelay(delay) }

// InProgress resets the job's ack wait: the job is still being worked on.
func (j *JobMsg) InProgress() error { return j.m.InProgress() }
