package recorder

import (
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
)

// ownerStatus is a camera's status on this node, published through
// Config.Statuses on every change. The supervisor and pipeline of the
// camera's run and its owner write it.
type ownerStatus struct {
	o *owner

	mu         sync.Mutex
	st         status.Status
	planW      int
	planH      int
	secretPart string // the camera's password, kept out of errors
}

func (s *ownerStatus) init(o *owner) {
	s.o = o
	s.st = status.Status{
		Camera: o.id, Code: status.Offline, Text: status.Offline.Text(),
		Node: o.r.cfg.NodeID, Since: time.Now().UTC(),
	}
}

// setCode is the supervisor's OnStatus.
func (o *owner) setCode(code status.Code, err error) { o.status.setCode(code, err) }

func (s *ownerStatus) setCode(code status.Code, err error) {
	s.mu.Lock()
	prev := s.st.Code
	s.st.Code = code
	s.st.Text = code.Text()
	s.st.Since = time.Now().UTC()
	if err != nil {
		s.st.LastError = s.redact(err)
		s.st.Reason, s.st.ReasonDetail = causeOf(code, err)
	} else if code == status.Online {
		s.st.LastError, s.st.Reason, s.st.ReasonDetail = "", "", ""
	}
	s.mu.Unlock()
	if prev == status.Online && code != status.Online {
		if m := s.o.r.cfg.Metrics; m != nil {
			m.Reconnects.Inc()
		}
	}
	s.o.r.updateGauges()
	s.publish()
}

// fail reports a record that cannot be recorded: ERRO PERMANENTE with the
// reason, until the record changes.
func (s *ownerStatus) fail(err error) {
	code := status.Offline
	if _, ok := ingest.IsPermanent(err); ok {
		code = status.Permanent
	}
	s.setCode(code, err)
}

// secret sets the password kept out of the status's errors.
func (s *ownerStatus) secret(rawURL string) {
	p := ""
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		p, _ = u.User.Password()
	}
	s.mu.Lock()
	s.secretPart = p
	s.mu.Unlock()
}

// redact returns err's text without the camera's password; s.mu is held.
func (s *ownerStatus) redact(err error) string {
	msg := err.Error()
	if s.secretPart != "" {
		msg = strings.ReplaceAll(msg, s.secretPart, "xxxxx")
	}
	return msg
}

// setDimensions records the size of the picture received.
func (o *owner) setDimensions(w, h int) {
	if w == 0 {
		return
	}
	s := &o.status
	s.mu.Lock()
	changed := s.st.Width != w || s.st.Height != h
	s.st.Width, s.st.Height = w, h
	changed = s.resolutionError() || changed
	s.mu.Unlock()
	if changed {
		s.publish()
	}
}

// plan sets the plan's resolution and judges the picture against it.
func (s *ownerStatus) plan(w, h int) {
	s.mu.Lock()
	s.planW, s.planH = w, h
	changed := s.resolutionError()
	s.mu.Unlock()
	if changed {
		s.publish()
	}
}

// resolutionError sets resolution_error from the picture and the plan and
// reports whether it changed; s.mu is held.
func (s *ownerStatus) resolutionError() bool {
	v := s.planW > 0 && s.planH > 0 && s.st.Width*s.st.Height > s.planW*s.planH
	changed := v != s.st.ResolutionError
	s.st.ResolutionError = v
	return changed
}

func (s *ownerStatus) setRecordingError(v bool) {
	s.mu.Lock()
	changed := s.st.RecordingError != v
	s.st.RecordingError = v
	s.mu.Unlock()
	if changed {
		s.publish()
	}
}

func (s *ownerStatus) code() status.Code {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Code
}

func (s *ownerStatus) snapshot() status.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *ownerStatus) publish() { s.o.r.publish(s.snapshot()) }

// Statuses receives cameras' statuses (the bus's outbox in production).
type Statuses interface {
	// EnqueueStatus queues s for publication; it must not block.
	EnqueueStatus(s status.Status) error
}

// publish hands s, with the camera's completeness, to Config.Statuses.
// The recorder is the one writer of a camera's status.
func (r *Recorder) publish(s status.Status) {
	if r.complete != nil {
		r.complete.fill(&s)
	}
	if r.cfg.Statuses == nil {
		return
	}
	if err := r.cfg.Statuses.EnqueueStatus(s); err != nil {
		if m := r.cfg.Metrics; m != nil {
			m.StatusPublishFail.Inc()
		}
		r.cfg.Log.Debug("status not queued", zap.String("camera", s.Camera), zap.Error(err))
	}
}

// unplacedError is the last_error of a camera no node has room for.
const unplacedError = "no recorder node has room for this camera"

// Unplaced publishes, for each camera of ids, an OFFLINE status saying
// that no recorder node has room for it; wire it to the cluster's
// OnUnplaced, which names the cameras that this node would record if it
// had room (it stops those it records).
func (r *Recorder) Unplaced(ids []string) {
	for _, id := range ids {
		r.publish(status.Status{
			Camera: id, Code: status.Offline, Text: status.Offline.Text(), Node: r.cfg.NodeID,
			LastError: unplacedError, Since: time.Now().UTC(),
		})
	}
}
