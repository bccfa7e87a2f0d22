package motion

// toneBins is the number of reference luma ranges of a tone curve.
const toneBins = 32

// toneCurve maps reference luma levels to the levels expected in the
// current picture, learnt from the pictures themselves: for each range of
// reference levels, the median current level of its pixels. It follows a
// lighting change (gain, offset, gamma, clipping) while a moving object,
// a small share of each range, barely moves the medians.
type toneCurve struct {
	hist [toneBins][256]uint16
	lut  [256]float32
}

// fit learns the curve from ref (reference levels, one per pixel) and cur.
func (c *toneCurve) fit(ref []float32, cur []uint8) {
	for i := range c.hist {
		c.hist[i] = [256]uint16{}
	}
	var count [toneBins]int
	for i, r := range ref {
		b := min(int(r)*toneBins/256, toneBins-1)
		if b < 0 {
			b = 0
		}
		if c.hist[b][cur[i]] < 0xffff {
			c.hist[b][cur[i]]++
		}
		count[b]++
	}
	var med [toneBins]float32
	var ok [toneBins]bool
	// Global offset, for ranges with too few pixels.
	var sumOff float64
	for i, r := range ref {
		sumOff += float64(cur[i]) - float64(r)
	}
	off := float32(0)
	if len(ref) > 0 {
		off = float32(sumOff / float64(len(ref)))
	}
	for b := 0; b < toneBins; b++ {
		if count[b] < 16 {
			continue
		}
		acc := 0
		for v, k := range c.hist[b] {
			acc += int(k)
			if acc*2 >= count[b] {
				med[b], ok[b] = float32(v), true
				break
			}
		}
	}
	const width = 256 / toneBins
	for v := 0; v < 256; v++ {
		// Interpolate between the centres of the neighbouring ranges.
		pos := (float32(v) - width/2) / width
		b0 := int(pos)
		if pos < 0 {
			b0 = -1
		}
		b1 := b0 + 1
		frac := pos - float32(b0)
		get := func(b int) (float32, bool) {
			if b < 0 || b >= toneBins || !ok[b] {
				return 0, false
			}
			centre := float32(b*width + width/2)
			return med[b] - centre, true
		}
		o0, k0 := get(b0)
		o1, k1 := get(b1)
		var o float32
		switch {
		case k0 && k1:
			o = o0*(1-frac) + o1*frac
		case k0:
			o = o0
		case k1:
			o = o1
		default:
			o = off
		}
		c.lut[v] = float32(v) + o
	}
}

// expect returns the level expected for reference level r.
func (c *toneCurve) expect(r float32) float32 {
	i := int(r)
	if i < 0 {
		i = 0
	}
	if i > 255 {
		i = 255
	}
	return c.lut[i]
}
