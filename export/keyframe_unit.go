package export

// Unit returns the keyframe as one decodable access unit: its parameter
// sets (VPS, SPS, PPS, those it has) followed by its NALUs.
func (kf *Keyframe) Unit() [][]byte {
	var unit [][]byte
	for _, ps := range [][]byte{kf.VPS, kf.SPS, kf.PPS} {
		if len(ps) > 0 {
			unit = append(unit, ps)
		}
	}
	return append(unit, kf.NALUs...)
}
