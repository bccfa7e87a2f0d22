package audio

import (
	"errors"
	"fmt"
)

// Errors of OpusSamples, for an Opus packet that breaks the framing rules
// of RFC 6716 (section 3.4).
var (
	ErrOpusEmpty    = errors.New("opus packet is empty")
	ErrOpusFraming  = errors.New("opus packet framing is invalid")
	ErrOpusTooLong  = errors.New("opus packet lasts more than 120 ms")
	ErrOpusTooLarge = errors.New("opus frame larger than 1275 bytes")
)

// Opus limits (RFC 6716 section 3.4).
const (
	// OpusRate is the rate of Opus timestamps and of durations below.
	OpusRate = 48000
	// OpusMaxSamples is the most a packet may last: 120 ms at 48 kHz.
	OpusMaxSamples = 5760
	opusMaxFrame   = 1275
)

// opusFrameSamples is the duration of one frame, at 48 kHz, for each TOC
// configuration (RFC 6716 section 3.1, table 2).
var opusFrameSamples = [32]int{
	480, 960, 1920, 2880, // SILK narrowband 10, 20, 40, 60 ms
	480, 960, 1920, 2880, // SILK mediumband
	480, 960, 1920, 2880, // SILK wideband
	480, 960, // Hybrid super-wideband 10, 20 ms
	480, 960, // Hybrid fullband
	120, 240, 480, 960, // CELT narrowband 2.5, 5, 10, 20 ms
	120, 240, 480, 960, // CELT wideband
	120, 240, 480, 960, // CELT super-wideband
	120, 240, 480, 960, // CELT fullband
}

// OpusSamples checks the framing of an Opus packet (its TOC byte, frame
// count and frame lengths) and returns how long it lasts in samples at
// 48 kHz. It never panics and reads nothing past b.
func OpusSamples(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, ErrOpusEmpty
	}
	per := opusFrameSamples[b[0]>>3]
	rest := len(b) - 1
	switch b[0] & 3 {
	case 0: // one frame
		if rest > opusMaxFrame {
			return 0, ErrOpusTooLarge
		}
		return per, nil
	case 1: // two frames of equal size
		if rest%2 != 0 {
			return 0, fmt.Errorf("%w: two equal frames in %d bytes", ErrOpusFraming, rest)
		}
		if rest/2 > opusMaxFrame {
			return 0, ErrOpusTooLarge
		}
		return 2 * per, nil
	case 2: // two frames, the first one's size coded
		n, used, err := opusFrameLength(b[1:])
		if err != nil {
			return 0, err
		}
		if n > rest-used {
			return 0, fmt.Errorf("%w: first frame of %d bytes in %d", ErrOpusFraming, n, rest-used)
		}
		if rest-used-n > opusMaxFrame {
			return 0, ErrOpusTooLarge
		}
		return 2 * per, nil
	}
	return opusCode3(b, per)
}

// opusCode3 checks a packet of an arbitrary number of frames.
func opusCode3(b []byte, per int) (int, error) {
	if len(b) < 2 {
		return 0, fmt.Errorf("%w: no frame count", ErrOpusFraming)
	}
	count := int(b[1] & 0x3f)
	vbr, padded := b[1]&0x80 != 0, b[1]&0x40 != 0
	if count == 0 {
		return 0, fmt.Errorf("%w: zero frames", ErrOpusFraming)
	}
	if count*per > OpusMaxSamples {
		return 0, ErrOpusTooLong
	}
	p := b[2:]
	padding := 0
	if padded {
		for {
			if len(p) == 0 {
				return 0, fmt.Errorf("%w: padding length cut short", ErrOpusFraming)
			}
			v := int(p[0])
			p = p[1:]
			if v < 255 {
				padding += v
				break
			}
			padding += 254
		}
	}
	if padding > len(p) {
		return 0, fmt.Errorf("%w: %d bytes of padding in %d", ErrOpusFraming, padding, len(p))
	}
	data := len(p) - padding
	if !vbr {
		if data%count != 0 {
			return 0, fmt.Errorf("%w: %d equal frames in %d bytes", ErrOpusFraming, count, data)
		}
		if data/count > opusMaxFrame {
			return 0, ErrOpusTooLarge
		}
		return count * per, nil
	}
	// Every frame but the last has its length coded.
	sum := 0
	for range count - 1 {
		n, used, err := opusFrameLength(p)
		if err != nil {
			return 0, err
		}
		p = p[used:]
		data -= used
		if data < 0 {
			return 0, fmt.Errorf("%w: frame lengths run into the padding", ErrOpusFraming)
		}
		sum += n
	}
	if data < sum {
		return 0, fmt.Errorf("%w: frames of %d bytes in %d", ErrOpusFraming, sum, data)
	}
	if data-sum > opusMaxFrame {
		return 0, ErrOpusTooLarge
	}
	return count * per, nil
}

// opusFrameLength reads a frame length coded in one or two bytes.
func opusFrameLength(b []byte) (n, used int, err error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: frame length cut short", ErrOpusFraming)
	}
	if b[0] < 252 {
		return int(b[0]), 1, nil
	}
	if len(b) < 2 {
		return 0, 0, fmt.Errorf("%w: frame length cut short", ErrOpusFraming)
	}
	return int(b[1])*4 + int(b[0]), 2, nil
}
