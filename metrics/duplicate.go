package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// NewDuplicateRecording creates and registers
// vigia_duplicate_recording_seconds_total and returns what adds to it: the
// time a camera was recorded both by this node and by another that took
// its lease while a partition hid them from each other.
func NewDuplicateRecording(reg prometheus.Registerer) func(camera string, d time.Duration) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vigia_duplicate_recording_seconds_total",
		Help: "Seconds of camera video recorded by two nodes at once (a partition), counted by the node that learns of it.",
	})
	reg.MustRegister(c)
	return func(_ string, d time.Duration) { c.Add(d.Seconds()) }
}
