package transcode

// Options tune a Transcoder's H.264 output.
type Options struct {
	// FPS is the camera's frame rate, for the encoder's rate control and
	// keyframe interval. It defaults to 15.
	FPS int

	// KeyInterval is the number of frames between keyframes (a viewer
	// joining waits for one). It defaults to FPS: one a second.
	KeyInterval int

	// BitsPerPixel sets the target bit rate: width × height × FPS ×
	// BitsPerPixel. It defaults to 0.08 (1.1 Mbit/s at 720p15).
	BitsPerPixel float64
}

func (o Options) withDefaults() Options {
	if o.FPS <= 0 {
		o.FPS = 15
	}
	if o.KeyInterval <= 0 {
		o.KeyInterval = o.FPS
	}
	if o.BitsPerPixel <= 0 {
		o.BitsPerPixel = 0.08
	}
	return o
}
