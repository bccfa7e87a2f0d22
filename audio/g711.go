package audio

// G.711 (ITU-T G.711): each byte is one sample, companded from 13 (A-law)
// or 14 (µ-law) bits. Decoding is that of the ITU reference code; encoding
// rounds to the nearest level. Both give what FFmpeg's pcm_mulaw and
// pcm_alaw give, with 16-bit linear samples.

// ulawTable and alawTable map each byte to its linear sample.
var ulawTable, alawTable [256]int16

func init() {
	for i := range 256 {
		ulawTable[i] = ulawToLinear(byte(i))
		alawTable[i] = alawToLinear(byte(i))
	}
}

func ulawToLinear(u byte) int16 {
	u = ^u
	t := (int(u&0x0f) << 3) + 0x84
	t <<= (u & 0x70) >> 4
	if u&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

func alawToLinear(a byte) int16 {
	a ^= 0x55
	t := int(a&0x0f) << 4
	switch seg := (a & 0x70) >> 4; seg {
	case 0:
		t += 8
	case 1:
		t += 0x108
	default:
		t += 0x108
		t <<= seg - 1
	}
	if a&0x80 != 0 {
		return int16(t)
	}
	return int16(-t)
}

// DecodeG711 appends the linear samples of G.711 bytes b to dst: µ-law
// when ulaw, A-law otherwise.
func DecodeG711(dst []int16, b []byte, ulaw bool) []int16 {
	table := &alawTable
	if ulaw {
		table = &ulawTable
	}
	for _, c := range b {
		dst = append(dst, table[c])
	}
	return dst
}

// G711Sample returns the linear sample of one G.711 byte.
func G711Sample(b byte, ulaw bool) int16 {
	if ulaw {
		return ulawTable[b]
	}
	return alawTable[b]
}

// ulawEncode and alawEncode map a 14-bit sample (a 16-bit one shifted
// right by 2, offset to be positive) to the byte whose level is nearest,
// as FFmpeg's pcm_mulaw and pcm_alaw encoders do.
var ulawEncode, alawEncode [16384]byte

func init() {
	buildEncodeTable(&ulawEncode, ulawToLinear, 0xff)
	buildEncodeTable(&alawEncode, alawToLinear, 0xd5)
}

// buildEncodeTable fills t from the decoder: the boundary between two
// adjacent levels is their midpoint. mask is the byte of the smallest
// positive level.
func buildEncodeTable(t *[16384]byte, decode func(byte) int16, mask byte) {
	j := 1
	t[8192] = mask
	for i := range 127 {
		v1 := int(decode(byte(i) ^ mask))
		v2 := int(decode(byte(i+1) ^ mask))
		for v := (v1 + v2 + 4) >> 3; j < v; j++ {
			t[8192-j] = byte(i) ^ mask ^ 0x80
			t[8192+j] = byte(i) ^ mask
		}
	}
	for ; j < 8192; j++ {
		t[8192-j] = 127 ^ mask ^ 0x80
		t[8192+j] = 127 ^ mask
	}
	t[0] = t[1]
}

// EncodeG711 appends the G.711 bytes of linear samples s to dst: µ-law
// when ulaw, A-law otherwise.
func EncodeG711(dst []byte, s []int16, ulaw bool) []byte {
	table := &alawEncode
	if ulaw {
		table = &ulawEncode
	}
	for _, v := range s {
		dst = append(dst, table[(int(v)+32768)>>2])
	}
	return dst
}
