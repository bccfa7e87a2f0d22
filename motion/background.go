package motion

import (
	"image"
	"math"
)

const (
	learnRate  = 0.15 // background update per analysed picture, pixels that did not change
	absorbRate = 0.03 // pixels that changed: a stopped object fades into the background
	history    = 1    // analysed pictures back to the temporal reference
)

// background is a low-resolution luma model of the still scene, and the
// picture analysed before.
type background struct {
	w, h  int
	bg    []float32
	past  [history][]float32 // ring of recent pictures
	npast int
	ppos  int
	cur   []float32
	mBg   []bool
	mPast []bool
	tone  toneCurve
	have  bool

	lastArea float64 // result of the last compare
}

// reset forgets the model; the next picture becomes the background.
func (b *background) reset() { b.have = false; b.npast = 0; b.ppos = 0 }

// compare returns the share of g's pixels that moved: pixels that differ
// both from the background and from the picture analysed before,
// each after a tone curve compensates lighting, and whose 4 neighbours did
// too (scattered noise does not count). Differing from the background
// alone is not enough: a region that stays different but still (the
// ghost of an object gone, or one that stopped) is not motion. Then the
// background learns from g.
func (b *background) compare(g *image.Gray, s Settings) float64 {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	n := w * h
	if !b.have || b.w != w || b.h != h {
		b.w, b.h, b.have = w, h, true
		b.bg = make([]float32, n)
		b.cur = make([]float32, n)
		b.mBg = make([]bool, n)
		b.mPast = make([]bool, n)
		for i := range b.past {
			b.past[i] = make([]float32, n)
		}
		b.npast, b.ppos = 0, 0
		b.load(g)
		copy(b.bg, b.cur)
		b.push()
		return 0
	}
	b.load(g)
	cur8 := make([]uint8, 0, n)
	for y := 0; y < h; y++ {
		cur8 = append(cur8, g.Pix[y*g.Stride:y*g.Stride+w]...)
	}
	b.mask(b.bg, cur8, b.mBg, s)
	ref := b.past[(b.ppos-b.npast+history)%history] // oldest kept
	b.mask(ref, cur8, b.mPast, s)

	changed := 0
	both := func(i int) bool { return b.mBg[i] && b.mPast[i] }
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			if both(i) && both(i-1) && both(i+1) && both(i-w) && both(i+w) {
				changed++
			}
		}
	}
	for i, v := range b.cur {
		rate := float32(learnRate)
		if b.mBg[i] {
			rate = absorbRate
		}
		b.bg[i] += rate * (v - b.bg[i])
	}
	b.push()
	b.lastArea = float64(changed) / float64(n)
	return b.lastArea
}

func (b *background) load(g *image.Gray) {
	for y := 0; y < b.h; y++ {
		row := g.Pix[y*g.Stride : y*g.Stride+b.w]
		for x, v := range row {
			b.cur[y*b.w+x] = float32(v)
		}
	}
}

// push keeps the current picture as the newest past one.
func (b *background) push() {
	copy(b.past[b.ppos], b.cur)
	b.ppos = (b.ppos + 1) % history
	if b.npast < history {
		b.npast++
	}
}

// mask marks the pixels of cur that differ from ref after the tone curve,
// by more than the noise (4 σ, σ from the median absolute residual) and
// the sensitivity's minimum level change.
func (b *background) mask(ref []float32, cur []uint8, m []bool, s Settings) {
	b.tone.fit(ref, cur)
	var hist [256]int
	for i, r := range ref {
		d := math.Abs(float64(cur[i]) - float64(b.tone.expect(r)))
		hist[min(int(d), 255)]++
	}
	med, acc := 0, 0
	for i, k := range hist {
		acc += k
		if acc*2 >= len(ref) {
			med = i
			break
		}
	}
	thr := float32(max(s.minPixelChange(), 4*1.4826*(float64(med)+0.5)))
	for i, r := range ref {
		d := float32(cur[i]) - b.tone.expect(r)
		m[i] = d > thr || d < -thr
	}
}
