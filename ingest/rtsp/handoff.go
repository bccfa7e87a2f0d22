package rtsp

import (
	"sync/atomic"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// handoffQueue is the number of units that wait between the goroutine
// reading the camera and the sink: a few seconds of video and audio.
const handoffQueue = 256

// DropQueueFull is the reason given to OnDrop for units the sink did not
// take in time.
const DropQueueFull = "queue_full"

// handoff passes units from the goroutine that reads the camera to the
// sink, which is called on a goroutine of the handoff's own: reading waits
// on nothing but the socket, whatever the sink does (a lock, a full queue,
// a slow disk). When the sink falls behind by more than handoffQueue
// units, units are dropped and counted; after a video unit is dropped,
// video resumes at the next keyframe, marked as a gap (the frames between
// refer to what was dropped).
type handoff struct {
	sink   ingest.Sink
	onDrop func(reason string)
	video  int // track index of the video

	ch       chan *media.Unit
	quit     chan struct{}
	done     chan struct{}
	skipping atomic.Bool // video is dropped until the next keyframe
}

// newHandoff starts the goroutine that calls sink; it runs until close.
func newHandoff(sink ingest.Sink, video int, onDrop func(string)) *handoff {
	h := &handoff{sink: sink, onDrop: onDrop, video: video,
		ch: make(chan *media.Unit, handoffQueue), quit: make(chan struct{}), done: make(chan struct{})}
	go h.run()
	return h
}

func (h *handoff) run() {
	defer close(h.done)
	for {
		select {
		case u := <-h.ch:
			h.sink.Unit(u)
		case <-h.quit:
			for {
				select {
				case u := <-h.ch:
					h.sink.Unit(u)
				default:
					return
				}
			}
		}
	}
}

// put queues u for the sink without waiting. Units of one track come from
// one goroutine at a time.
func (h *handoff) put(u *media.Unit) {
	video := u.Track == h.video
	if video && h.skipping.Load() {
		if !u.Key {
			h.drop(u)
			return
		}
		u.Gap = true
	}
	select {
	case h.ch <- u:
		if video {
			h.skipping.Store(false)
		}
	default:
		h.drop(u)
		if video {
			h.skipping.Store(true)
		}
	}
}

func (h *handoff) drop(u *media.Unit) {
	u.Release()
	if h.onDrop != nil {
		h.onDrop(DropQueueFull)
	}
}

// close hands the sink what is queued and returns once the sink is no
// longer called. Units put after close are let go uncounted.
func (h *handoff) close() {
	close(h.quit)
	<-h.done
}
