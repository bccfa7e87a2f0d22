package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/vigia/vigia/status"
)

// onlineTimeout bounds the wait for every camera to be online.
const onlineTimeout = 3 * time.Minute

// benchConnectRate is ingest.connect_rate in a run: cameras/5 a second (at
// least the default), so that even 1,000 cameras connect in about 5 s; the
// warm-up starts once they all have.
func benchConnectRate(cameras int, def float64) float64 {
	return max(def, float64(cameras)/5)
}

// waitOnline waits until every camera receives media (status ONLINE), so
// that the warm-up and the window see them all; with flapping cameras,
// until those not down are.
func (r *run) waitOnline(ctx context.Context, cameras []string) error {
	want := len(cameras) - int(math.Ceil(r.o.Flap*float64(len(cameras))))
	start := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		online := 0
		for _, id := range cameras {
			if s, ok := r.app.Recorder().Status(id); ok && s.Code == status.Online {
				online++
			}
		}
		if online >= want {
			r.progress("%d of %d cameras online after %.1f s", online, len(cameras), time.Since(start).Seconds())
			return nil
		}
		if time.Since(start) > onlineTimeout {
			return fmt.Errorf("%d of %d cameras online after %v", online, len(cameras), onlineTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.synth.done:
			return r.synth.exitError()
		case <-tick.C:
		}
	}
}
