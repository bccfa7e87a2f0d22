package bench

import (
	"time"
)

// decoderSampleEvery is how often the decoder processes' memory is read
// during the window: they start at a burst of thumbnails and stop when
// idle, so one reading at the end says little.
const decoderSampleEvery = time.Second

// decoderSampler reads the resident set of the recorder's decoder
// processes during the window.
type decoderSampler struct {
	quit, done chan struct{}

	samples          int
	sumAnon, maxAnon int64 // all processes together, bytes
	maxRSS           int64
}

// sampleDecoders starts reading the decoder processes' memory every
// interval until stop.
func (r *run) sampleDecoders(every time.Duration) *decoderSampler {
	d := &decoderSampler{quit: make(chan struct{}), done: make(chan struct{})}
	pool := r.app.Decoders()
	go func() { // exits at stop
		defer close(d.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.quit:
				return
			case <-t.C:
			}
			var anon, rss int64
			for _, pid := range pool.Stats().PIDs {
				if a, _, err := pidRSSParts(pid); err == nil {
					anon += a
				}
				if n, err := procRSS(pid); err == nil {
					rss += n
				}
			}
			d.samples++
			d.sumAnon += anon
			d.maxAnon, d.maxRSS = max(d.maxAnon, anon), max(d.maxRSS, rss)
		}
	}()
	return d
}

// stop ends the sampling and waits for it.
func (d *decoderSampler) stop() {
	close(d.quit)
	<-d.done
}

// decoderStats is the usage of the recorder's decoder processes over the
// window: their CPU as the pool counts it (processes that exited
// included), their memory as sampled, and what runs at the end; nil when
// none ran.
func (r *run) decoderStats(w0, w1 window, sampled *decoderSampler) *DecoderStats {
	st := r.app.Decoders().Stats()
	if w1.decoder == w0.decoder && st.Processes == 0 && sampled.maxRSS == 0 {
		return nil
	}
	d := &DecoderStats{Processes: st.Processes, Usage: usage(w1.decoder-w0.decoder, w1.at.Sub(w0.at), r.o.Cameras)}
	for _, n := range st.Restarts {
		d.Restarts += n
	}
	var rss, anon, file int64
	for _, pid := range st.PIDs {
		if n, err := procRSS(pid); err == nil {
			rss += n
		}
		if a, f, err := pidRSSParts(pid); err == nil {
			anon, file = anon+a, file+f
		}
	}
	d.Usage.RSSEndMiB, d.AnonMiB, d.FileMiB = mib(rss), mib(anon), mib(file)
	d.PeakRSSMiB, d.PeakAnonMiB = mib(sampled.maxRSS), mib(sampled.maxAnon)
	if sampled.samples > 0 {
		d.MeanAnonMiB = mib(sampled.sumAnon) / float64(sampled.samples)
	}
	if r.o.Cameras > 0 {
		d.Usage.RSSPerCameraMiB = d.MeanAnonMiB / float64(r.o.Cameras)
	}
	return d
}
