package decoder

// Options tune a Decoder.
type Options struct {
	// Fast skips the in-loop deblocking filter and allows non-conforming
	// speed-ups. Pictures are slightly blockier and errors accumulate until
	// the next keyframe: good for motion analysis at low resolution, not
	// for images shown to people. It defaults to false.
	Fast bool
}
