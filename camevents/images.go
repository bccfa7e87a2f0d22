package camevents

import (
	"context"
	"sync"
	"time"
)

// maxImages bounds the images a camera keeps for events in progress.
const maxImages = 16

// snapshotTimeout bounds the taking of one event image.
const snapshotTimeout = 10 * time.Second

// images are the pictures taken when events start (the node's newest
// keyframe of the camera), one at a time.
type images struct {
	snapshot func(ctx context.Context, camera string) ([]byte, error)
	camera   string
	busy     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	imgs     map[string][]byte
	// pending is the key of the picture being taken, done closed when it
	// is.
	pending string
	done    chan struct{}
}

func newImages(snapshot func(context.Context, string) ([]byte, error), camera string) *images {
	return &images{snapshot: snapshot, camera: camera, busy: make(chan struct{}, 1), imgs: map[string][]byte{}}
}

// take stores a picture for the event starting on key, unless one is
// already being taken or there is no snapshot hook. Its goroutine ends
// within snapshotTimeout.
func (im *images) take(key string) {
	if im.snapshot == nil {
		return
	}
	select {
	case im.busy <- struct{}{}:
	default:
		return
	}
	done := make(chan struct{})
	im.mu.Lock()
	im.pending, im.done = key, done
	im.mu.Unlock()
	im.wg.Add(1)
	go func() {
		defer im.wg.Done()
		defer func() { <-im.busy }()
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), snapshotTimeout)
		defer cancel()
		jpeg, err := im.snapshot(ctx, im.camera)
		if err != nil || len(jpeg) == 0 {
			return
		}
		im.mu.Lock()
		defer im.mu.Unlock()
		if len(im.imgs) >= maxImages {
			clear(im.imgs)
		}
		im.imgs[key] = jpeg
	}()
}

// get returns and forgets the picture of key, first waiting for it while
// it is being taken (an event that ended quickly; at most snapshotTimeout).
func (im *images) get(key string) []byte {
	im.mu.Lock()
	if im.pending == key && im.done != nil {
		done := im.done
		im.mu.Unlock()
		<-done
		im.mu.Lock()
	}
	defer im.mu.Unlock()
	b := im.imgs[key]
	delete(im.imgs, key)
	return b
}

// wait waits for the pictures being taken.
func (im *images) wait() { im.wg.Wait() }
