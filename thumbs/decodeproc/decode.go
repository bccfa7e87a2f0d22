package decodeproc

import (
	"bytes"
	"fmt"
	"image/jpeg"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decoder"
)

// decoders are a decoder process's decoders, one per codec and option,
// reused for every request: each request starts from a reset decoder.
type decoders struct {
	m map[decoderKey]*decoder.Decoder
}

type decoderKey struct {
	codec media.Codec
	fast  bool
}

func newDecoders() *decoders {
	return &decoders{m: make(map[decoderKey]*decoder.Decoder)}
}

func (d *decoders) get(codec media.Codec, fast bool) (*decoder.Decoder, error) {
	k := decoderKey{codec, fast}
	if dec := d.m[k]; dec != nil {
		return dec, nil
	}
	dec, err := decoder.New(codec, decoder.Options{Fast: fast})
	if err != nil {
		return nil, err
	}
	d.m[k] = dec
	return dec, nil
}

// close closes every decoder (the next request opens what it needs).
func (d *decoders) close() {
	for k, dec := range d.m {
		dec.Close()
		delete(d.m, k)
	}
}

// decode runs one request.
func (d *decoders) decode(req *Request) (*Result, error) {
	dec, err := d.get(req.Codec, req.Fast)
	if err != nil {
		return nil, err
	}
	dec.Reset()
	// The decoder keeps its newest picture until reset: a still camera's
	// last request must not hold it.
	defer dec.Reset()
	res := &Result{Last: -1}
	for i, u := range req.Units {
		var ok bool
		if req.Still {
			ok, err = dec.DecodeStill(u)
		} else {
			ok, err = dec.Decode(u)
		}
		if err != nil {
			return nil, fmt.Errorf("unit %d: %w", i, err)
		}
		if !ok {
			continue
		}
		res.Pictures++
		res.Last = i
		if i == 0 && req.GrayFirst {
			if res.GrayFirst, err = dec.Gray(req.GrayWidth, nil); err != nil {
				return nil, err
			}
		}
	}
	if res.Pictures == 0 {
		return nil, decoder.ErrNoPicture
	}
	res.Width, res.Height = dec.Size()
	if req.GrayLast {
		if res.GrayLast, err = dec.Gray(req.GrayWidth, nil); err != nil {
			return nil, err
		}
	}
	switch req.Image {
	case JPEG:
		img, err := dec.YCbCr(req.ImageWidth)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		buf.Grow(img.Rect.Dx() * img.Rect.Dy() / 4)
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: req.Quality}); err != nil {
			return nil, fmt.Errorf("jpeg: %w", err)
		}
		res.JPEG, res.ImageWidth, res.ImageHeight = buf.Bytes(), img.Rect.Dx(), img.Rect.Dy()
	case YCbCr:
		if res.YCbCr, err = dec.YCbCr(req.ImageWidth); err != nil {
			return nil, err
		}
		res.ImageWidth, res.ImageHeight = res.YCbCr.Rect.Dx(), res.YCbCr.Rect.Dy()
	}
	return res, nil
}
