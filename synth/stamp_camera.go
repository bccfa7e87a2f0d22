package synth

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
)

// StampConfig configures a StampCamera.
type StampConfig struct {
	// Addr is the RTSP listen address. It defaults to "127.0.0.1:0".
	Addr string
	// Width and Height of the pictures. They default to 640×360.
	Width, Height int
	// FPS is the frame rate. It defaults to 30.
	FPS int
	// GOP is the frames from one keyframe to the next. It defaults to FPS
	// (one a second).
	GOP int
	// FFmpeg is the ffmpeg binary (with libx264). It defaults to "ffmpeg".
	FFmpeg string
	// Codec is CodecH264 (libx264) or CodecH265 (libx265, ultrafast,
	// zerolatency, no B-frames either). It defaults to CodecH264.
	Codec string
	// Audio, when set, adds sound: a beep from each whole second of the
	// wall clock (BeepHz, BeepLength), AudioAAC (AAC-LC, 16 kHz) or
	// AudioPCMU (8 kHz). It defaults to none.
	Audio string
}

// StampCamera is a live synthetic camera for latency measures: each
// picture shows the wall-clock time it was made (DrawStamp), is encoded at
// once by FFmpeg's libx264 (ultrafast, zerolatency, no B-frames) and served
// over RTSP at rtsp://{Addr}/stamp as soon as it is encoded; a picture the
// encoder has no time for (a loaded machine) is dropped, as a camera does. A viewer
// reads the stamp back from the picture it shows (ReadStamp,
// StampReaderJS): now minus the stamp is the glass-to-glass latency,
// encoding included, as with a real camera.
type StampCamera struct {
	cfg    StampConfig
	rtsp   *gortsplib.Server
	stream *gortsplib.ServerStream
	medi   *description.Media
	enc    *exec.Cmd
	rtpIn  net.PacketConn
	stdin  io.WriteCloser
	audio  *stampAudio // nil without sound

	// drawn holds the wall-clock time each picture given to the encoder
	// was drawn, by its number at the encoder (modulo its length): the
	// time of its RTP timestamp. frames counts the pictures given to the
	// encoder, encoded those whose packets came back from it.
	drawnMu sync.Mutex
	drawn   [256]time.Time
	frames  int64
	encoded int64
	start   time.Time // the picture clock's start
	// The RTP time and wall-clock time of the last video packet sent,
	// for the sender reports of sound.
	lastTS  uint32
	lastNTP time.Time

	addr string
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// StartStampCamera starts the encoder, the picture clock and the RTSP
// server; Close stops them.
func StartStampCamera(cfg StampConfig) (*StampCamera, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Width == 0 || cfg.Height == 0 {
		cfg.Width, cfg.Height = 640, 360
	}
	if cfg.FPS <= 0 {
		cfg.FPS = 30
	}
	if cfg.GOP <= 0 {
		cfg.GOP = cfg.FPS
	}
	if cfg.FFmpeg == "" {
		cfg.FFmpeg = "ffmpeg"
	}
	if cfg.Width < (stampCols+2)*StampBlock || cfg.Height < (StampRows+2)*StampBlock || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("stamp camera: %dx%d too small or odd for the stamp", cfg.Width, cfg.Height)
	}
	c := &StampCamera{cfg: cfg, quit: make(chan struct{})}
	var f format.Format = &format.H264{PayloadTyp: videoPayloadType, PacketizationMode: 1}
	if cfg.Codec == CodecH265 {
		f = &format.H265{PayloadTyp: videoPayloadType}
	}
	c.medi = &description.Media{Type: description.MediaTypeVideo, Formats: []format.Format{f}}
	medias := []*description.Media{c.medi}
	if cfg.Audio != "" {
		var err error
		if c.audio, err = newStampAudio(cfg.Audio); err != nil {
			return nil, err
		}
		medias = append(medias, c.audio.medi)
	}
	c.rtsp = &gortsplib.Server{
		Handler:     stampHandler{c},
		RTSPAddress: cfg.Addr,
		// A reader the machine's load holds back for a moment gets the
		// packets queued meanwhile, not a hole in the sound (the default
		// queue, 256 packets, is 2 s of the video).
		WriteQueueSize: 4096,
		// The camera sends its own sender reports (sound): gortsplib
		// v4.16.2's put the nanoseconds where the NTP fraction of a second
		// goes, up to 0.77 s early.
		DisableRTCPSenderReports: true,
		Listen: func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			if err == nil {
				c.addr = ln.Addr().String()
			}
			return ln, err
		},
	}
	if err := c.rtsp.Start(); err != nil {
		c.closeAudio()
		return nil, fmt.Errorf("stamp camera: %w", err)
	}
	c.stream = &gortsplib.ServerStream{Server: c.rtsp, Desc: &description.Session{Medias: medias}}
	if err := c.stream.Initialize(); err != nil {
		c.rtsp.Close()
		c.closeAudio()
		return nil, err
	}
	if err := c.startEncoder(); err != nil {
		c.stream.Close()
		c.rtsp.Close()
		c.closeAudio()
		return nil, err
	}
	c.start = time.Now()
	c.wg.Add(2)
	go c.relay()
	go c.clock()
	if c.audio != nil {
		c.wg.Add(1)
		go c.sound()
	}
	return c, nil
}

// startEncoder starts FFmpeg reading raw pictures on stdin and sending
// RTP (RFC 6184) to a loopback socket of ours.
func (c *StampCamera) startEncoder() error {
	var err error
	if c.rtpIn, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		return err
	}
	cfg := c.cfg
	enc := []string{"-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-threads", "1",
		"-g", strconv.Itoa(cfg.GOP), "-bf", "0", "-x264-params", "repeat-headers=1"}
	if cfg.Codec == CodecH265 {
		enc = []string{"-c:v", "libx265", "-preset", "ultrafast", "-tune", "zerolatency",
			"-x265-params", "keyint=" + strconv.Itoa(cfg.GOP) + ":bframes=0:repeat-headers=1:pools=1:frame-threads=1:log-level=error"}
	}
	args := append([]string{"-hide_banner", "-loglevel", "error",
		"-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", strconv.Itoa(cfg.Width) + "x" + strconv.Itoa(cfg.Height),
		"-r", strconv.Itoa(cfg.FPS), "-i", "pipe:0"}, enc...)
	c.enc = exec.Command(cfg.FFmpeg, append(args,
		"-f", "rtp", "-payload_type", strconv.Itoa(videoPayloadType),
		"rtp://"+c.rtpIn.LocalAddr().String()+"?pkt_size=1200")...)
	if c.stdin, err = c.enc.StdinPipe(); err != nil {
		_ = c.rtpIn.Close()
		return err
	}
	if err := c.enc.Start(); err != nil {
		_ = c.rtpIn.Close()
		return fmt.Errorf("stamp camera encoder: %w", err)
	}
	return nil
}

// URL returns the camera's RTSP address.
func (c *StampCamera) URL() string { return "rtsp://" + c.addr + "/stamp" }

// clock writes a stamped picture to the encoder every frame interval
// until Close, as a camera captures: the picture of slot k is stamped
// with the time it is due, start + k frame intervals, and so is its RTP
// timestamp (relay). Slots a loaded machine misses are not made up, and a
// picture is dropped while the encoder is more than maxEncoderBacklog
// pictures behind: a camera whose encoder cannot keep up sends fewer
// frames, never older and older ones. (Pictures written in a burst to an
// encoder slower than real time made the video arrive later and later
// while the sound came on time: 45 ms more a second on a loaded machine.)
func (c *StampCamera) clock() {
	defer c.wg.Done()
	w, h := c.cfg.Width, c.cfg.Height
	pic := make([]byte, w*h*3/2)
	for i := range pic {
		pic[i] = stampGray
	}
	interval := time.Second / time.Duration(c.cfg.FPS)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for k := int64(0); ; {
		select {
		case <-c.quit:
			return
		case now := <-tick.C:
			k = max(k, int64(now.Sub(c.start)/interval))
			at := c.start.Add(time.Duration(k) * interval)
			k++
			c.drawnMu.Lock()
			behind := c.frames - c.encoded
			c.drawnMu.Unlock()
			if behind > maxEncoderBacklog {
				continue
			}
			DrawStamp(pic[:w*h], w, at)
			c.drawnMu.Lock()
			c.drawn[c.frames%int64(len(c.drawn))] = at
			c.frames++
			c.drawnMu.Unlock()
			if _, err := c.stdin.Write(pic); err != nil {
				return
			}
		}
	}
}

// maxEncoderBacklog is how many pictures the encoder may have been given
// and not sent yet before the camera drops pictures.
const maxEncoderBacklog = 3

// relay hands the encoder's RTP packets to the RTSP readers.
func (c *StampCamera) relay() {
	defer c.wg.Done()
	buf := make([]byte, 2048)
	var (
		ts0     uint32
		started bool
	)
	step := uint32(90000 / c.cfg.FPS)
	for {
		n, _, err := c.rtpIn.ReadFrom(buf)
		if err != nil {
			return
		}
		var p rtp.Packet
		if p.Unmarshal(buf[:n]) != nil {
			continue
		}
		if !started {
			ts0, started = p.Timestamp, true
		}
		// The encoder numbers its pictures; the RTP timestamp is the
		// instant the picture was drawn.
		ntp := c.drawnAt(int64((p.Timestamp - ts0) / step))
		p.Timestamp = ts0 + uint32(ntp.Sub(c.start)*90000/time.Second)
		c.drawnMu.Lock()
		c.lastTS, c.lastNTP = p.Timestamp, ntp
		c.drawnMu.Unlock()
		_ = c.stream.WritePacketRTPWithNTP(c.medi, &p, ntp)
	}
}

// drawnAt returns the time picture k was drawn (the encoder numbers its
// pictures from 0 at the input's rate), or now when it is no longer known,
// and notes that the encoder sent picture k.
func (c *StampCamera) drawnAt(k int64) time.Time {
	c.drawnMu.Lock()
	defer c.drawnMu.Unlock()
	c.encoded = max(c.encoded, k+1)
	if k < c.frames && k >= c.frames-int64(len(c.drawn)) {
		return c.drawn[k%int64(len(c.drawn))]
	}
	return time.Now()
}

// sound sends the camera's audio every 20 ms, and a sender report of each
// track every second, until Close. The reports tie each track's RTP time
// to the wall clock from the start, as cameras' do, so that a reader
// places the audio against the video by them within a second.
func (c *StampCamera) sound() {
	defer c.wg.Done()
	c.audio.t0 = time.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var (
		audioTS  uint32
		audioNTP time.Time
		reported time.Time
	)
	for {
		select {
		case <-c.quit:
			return
		case now := <-tick.C:
			c.audio.packets(now, func(p *rtp.Packet, ntp time.Time) {
				audioTS, audioNTP = p.Timestamp, ntp
				_ = c.stream.WritePacketRTPWithNTP(c.audio.medi, p, ntp)
			})
			if now.Sub(reported) < time.Second {
				continue
			}
			reported = now
			c.drawnMu.Lock()
			videoTS, videoNTP := c.lastTS, c.lastNTP
			c.drawnMu.Unlock()
			if !audioNTP.IsZero() {
				_ = c.stream.WritePacketRTCP(c.audio.medi, &rtcp.SenderReport{NTPTime: media.NTPTime(audioNTP), RTPTime: audioTS})
			}
			if !videoNTP.IsZero() {
				_ = c.stream.WritePacketRTCP(c.medi, &rtcp.SenderReport{NTPTime: media.NTPTime(videoNTP), RTPTime: videoTS})
			}
		}
	}
}

func (c *StampCamera) closeAudio() {
	if c.audio != nil {
		c.audio.close()
	}
}

// Close stops the camera and waits for its goroutines and the encoder.
func (c *StampCamera) Close() {
	c.once.Do(func() {
		close(c.quit)
		_ = c.stdin.Close()
		if c.enc.Process != nil {
			_ = c.enc.Process.Kill()
		}
		_ = c.enc.Wait()
		_ = c.rtpIn.Close()
		c.wg.Wait()
		c.stream.Close()
		c.rtsp.Close()
		c.closeAudio()
	})
}

// stampHandler serves the camera's one stream to every reader.
type stampHandler struct{ c *StampCamera }

var errNoPath = errors.New("no such stream")

// OnDescribe implements gortsplib.ServerHandlerOnDescribe.
func (h stampHandler) OnDescribe(ctx *gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if ctx.Path != "/stamp" && ctx.Path != "stamp" {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, errNoPath
	}
	return &base.Response{StatusCode: base.StatusOK}, h.c.stream, nil
}

// OnSetup implements gortsplib.ServerHandlerOnSetup.
func (h stampHandler) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if ctx.Path != "/stamp" && ctx.Path != "stamp" {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, errNoPath
	}
	return &base.Response{StatusCode: base.StatusOK}, h.c.stream, nil
}

// OnPlay implements gortsplib.ServerHandlerOnPlay.
func (h stampHandler) OnPlay(*gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	return &base.Response{StatusCode: base.StatusOK}, nil
}
