//go:build cgo

package transcode

/*
#cgo pkg-config: libavcodec libavutil libswresample
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

typedef struct {
	AVCodecContext *enc;  // AAC-LC, mono
	AVCodecContext *dec;  // Opus, or NULL
	SwrContext *swr;      // to mono float at the AAC rate, made at first use
	AVFrame *in;          // the encoder's input
	AVFrame *out;         // the decoder's output
	AVPacket *pkt;        // the encoder's output
	AVPacket *dpkt;       // the decoder's input
	int rate;             // AAC rate
	int swr_fmt, swr_rate, swr_channels;
	int64_t cpu_ns;       // thread CPU time spent in the calls below
} vt_tc;

static int64_t vt_thread_ns(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void vt_close(vt_tc *t) {
	swr_free(&t->swr);
	av_frame_free(&t->in);
	av_frame_free(&t->out);
	av_packet_free(&t->pkt);
	av_packet_free(&t->dpkt);
	avcodec_free_context(&t->enc);
	avcodec_free_context(&t->dec);
	memset(t, 0, sizeof(*t));
}

// vt_open_encoder opens libavcodec's native AAC encoder: AAC-LC, mono, at
// rate, constant quality (global_quality, in hundredths of a lambda step)
// with the fast quantizer search, without perceptual noise substitution
// and temporal noise shaping (a few % of its time, little gained on a
// camera's sound).
static int vt_open_encoder(vt_tc *t, int rate, int quality) {
	const AVCodec *c = avcodec_find_encoder_by_name("aac");
	if (!c) return AVERROR_ENCODER_NOT_FOUND;
	AVCodecContext *e = avcodec_alloc_context3(c);
	if (!e) return AVERROR(ENOMEM);
	t->enc = e;
	e->sample_rate = rate;
	e->sample_fmt = AV_SAMPLE_FMT_FLTP;
	av_channel_layout_default(&e->ch_layout, 1);
	e->time_base = (AVRational){1, rate};
	e->profile = FF_PROFILE_AAC_LOW;
	e->thread_count = 1;
	e->flags |= AV_CODEC_FLAG_QSCALE;
	e->global_quality = quality * FF_QP2LAMBDA / 100;
	// The bit rate is a ceiling under constant quality: frames over it
	// are quantized again, which costs more than the quality loop itself.
	// AAC's own limit (6144 bits per frame and channel) is ceiling enough.
	e->bit_rate = 6 * rate;
	// Errors come back as return codes; nothing goes to standard error.
	e->log_level_offset = 24;
	AVDictionary *opts = NULL;
	av_dict_set(&opts, "aac_coder", "fast", 0);
	av_dict_set(&opts, "aac_pns", "0", 0);
	av_dict_set(&opts, "aac_tns", "0", 0);
	int r = avcodec_open2(e, c, &opts);
	av_dict_free(&opts);
	if (r < 0) return r;
	if (e->frame_size != 1024) return AVERROR(EINVAL);
	t->in = av_frame_alloc();
	t->pkt = av_packet_alloc();
	if (!t->in || !t->pkt) return AVERROR(ENOMEM);
	t->in->format = AV_SAMPLE_FMT_FLTP;
	av_channel_layout_default(&t->in->ch_layout, 1);
	t->in->sample_rate = rate;
	t->in->nb_samples = 1024;
	r = av_frame_get_buffer(t->in, 0);
	if (r < 0) return r;
	t->rate = rate;
	return 0;
}

// vt_open_opus opens libavcodec's native Opus decoder, asking for mono
// (stereo packets are mixed down).
static int vt_open_opus(vt_tc *t) {
	const AVCodec *c = avcodec_find_decoder_by_name("opus");
	if (!c) return AVERROR_DECODER_NOT_FOUND;
	AVCodecContext *d = avcodec_alloc_context3(c);
	if (!d) return AVERROR(ENOMEM);
	t->dec = d;
	d->sample_rate = 48000;
	av_channel_layout_default(&d->ch_layout, 1);
	d->thread_count = 1;
	d->log_level_offset = 24;
	int r = avcodec_open2(d, c, NULL);
	if (r < 0) return r;
	t->out = av_frame_alloc();
	t->dpkt = av_packet_alloc();
	if (!t->out || !t->dpkt) return AVERROR(ENOMEM);
	return 0;
}

// vt_swr makes the resampler convert from fmt, channels and rate to mono
// float at the AAC rate, keeping the one it has when nothing changed.
static int vt_swr(vt_tc *t, int fmt, int channels, int rate) {
	if (t->swr && t->swr_fmt == fmt && t->swr_channels == channels && t->swr_rate == rate) return 0;
	swr_free(&t->swr);
	AVChannelLayout in, mono;
	av_channel_layout_default(&in, channels);
	av_channel_layout_default(&mono, 1);
	int r = swr_alloc_set_opts2(&t->swr, &mono, AV_SAMPLE_FMT_FLT, t->rate, &in, fmt, rate, 0, NULL);
	if (r < 0) return r;
	r = swr_init(t->swr);
	if (r < 0) {
		swr_free(&t->swr);
		return r;
	}
	t->swr_fmt = fmt;
	t->swr_channels = channels;
	t->swr_rate = rate;
	return 0;
}

// vt_resample resamples n mono float samples at rate into out (cap
// samples) and returns the count written.
static int vt_resample(vt_tc *t, int rate, const float *in, int n, float *out, int cap) {
	int64_t c0 = vt_thread_ns();
	int r = vt_swr(t, AV_SAMPLE_FMT_FLT, 1, rate);
	if (r >= 0) {
		const uint8_t *ip[1] = {(const uint8_t *)in};
		uint8_t *op[1] = {(uint8_t *)out};
		r = swr_convert(t->swr, op, cap, ip, n);
	}
	t->cpu_ns += vt_thread_ns() - c0;
	return r;
}

// vt_decode decodes one Opus packet (data is only read during the call)
// and writes its samples, mono float at the AAC rate, into out (cap
// samples). It returns the count written, or an error.
static int vt_decode_frames(vt_tc *t, const uint8_t *data, int size, float *out, int cap);

static int vt_decode(vt_tc *t, const uint8_t *data, int size, float *out, int cap) {
	int64_t c0 = vt_thread_ns();
	int r = vt_decode_frames(t, data, size, out, cap);
	t->cpu_ns += vt_thread_ns() - c0;
	return r;
}

static int vt_decode_frames(vt_tc *t, const uint8_t *data, int size, float *out, int cap) {
	t->dpkt->data = (uint8_t *)data;
	t->dpkt->size = size;
	int r = avcodec_send_packet(t->dec, t->dpkt);
	t->dpkt->data = NULL;
	t->dpkt->size = 0;
	if (r < 0) return r;
	int n = 0;
	for (;;) {
		r = avcodec_receive_frame(t->dec, t->out);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) break;
		if (r < 0) return r;
		AVFrame *f = t->out;
		r = vt_swr(t, f->format, f->ch_layout.nb_channels, f->sample_rate);
		if (r >= 0) {
			uint8_t *op[1] = {(uint8_t *)(out + n)};
			r = swr_convert(t->swr, op, cap - n, (const uint8_t **)f->extended_data, f->nb_samples);
		}
		av_frame_unref(f);
		if (r < 0) return r;
		n += r;
	}
	return n;
}

// vt_encode gives the encoder n samples (1024; fewer only for the last
// frame; 0 drains it) starting at sample index pts, and copies the AAC
// frames that come out into out (cap bytes), back to back: their sizes
// and sample indexes into sizes and ptss (max of them). It returns their
// count, or an error.
static int vt_encode(vt_tc *t, const float *samples, int n, int64_t pts,
                     uint8_t *out, int cap, int *sizes, int64_t *ptss, int max) {
	int64_t c0 = vt_thread_ns();
	int r;
	if (n == 0) {
		r = avcodec_send_frame(t->enc, NULL);
	} else {
		t->in->nb_samples = 1024;
		r = av_frame_make_writable(t->in);
		if (r >= 0) {
			memcpy(t->in->data[0], samples, n * sizeof(float));
			t->in->nb_samples = n;
			t->in->pts = pts;
			r = avcodec_send_frame(t->enc, t->in);
		}
	}
	int count = 0, used = 0;
	while (r >= 0 && count < max) {
		r = avcodec_receive_packet(t->enc, t->pkt);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) {
			r = 0;
			break;
		}
		if (r < 0) break;
		if (t->pkt->size > cap - used) {
			r = AVERROR(ERANGE);
		} else {
			memcpy(out + used, t->pkt->data, t->pkt->size);
			sizes[count] = t->pkt->size;
			ptss[count] = t->pkt->pts;
			used += t->pkt->size;
			count++;
		}
		av_packet_unref(t->pkt);
	}
	t->cpu_ns += vt_thread_ns() - c0;
	return r < 0 ? r : count;
}

static int vt_extradata(vt_tc *t, uint8_t *out, int cap) {
	int n = t->enc->extradata_size;
	if (n > cap) return AVERROR(ERANGE);
	memcpy(out, t->enc->extradata, n);
	return n;
}

static void vt_errstr(int code, char *buf, int n) { av_strerror(code, buf, n); }
*/
import "C"

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
)

// Available reports whether this build can transcode.
func Available() bool { return true }

// Quality is the AAC encoder's constant quality, in hundredths of
// libavcodec's global_quality scale (lambda 118 per step; 100 is the
// encoder's default lambda): about 20 kbit/s for speech at 8 kHz, 30 at
// 16 kHz, on the fast quantizer search.
const Quality = 100

// maxAACFrame is the largest AAC-LC frame of one channel (6144 bits);
// maxOut the most frames one call to the encoder gives (the drain at the
// end gives the two it holds).
const (
	maxAACFrame = 768
	maxOut      = 4
)

// Transcoder turns the units of one G.711 or Opus track into AAC-LC
// frames of 1024 samples, mono. It is not safe for concurrent use.
type Transcoder struct {
	c        *C.vt_tc // C memory
	codec    media.Codec
	inRate   int
	channels int
	rate     int
	track    *media.Track
	tm       timing

	fifo  []float32 // samples not yet encoded: fewer than 1024 between calls
	pcm   []float32 // one unit's samples at the AAC rate
	tmp   []float32 // one unit's G.711 samples at the input rate
	out   []byte    // one AAC frame
	sent  int64     // samples given to the encoder
	eof   bool      // drained: takes no more samples
	stats Stats

	horizon time.Duration // end of the last AAC frame emitted
	emitted bool
}

// New returns a Transcoder for t (media.G711U, media.G711A or media.Opus).
func New(t *media.Track) (*Transcoder, error) {
	inRate, channels, err := checkTrack(t)
	if err != nil {
		return nil, err
	}
	rate := aacRate(inRate)
	if t.Codec == media.Opus {
		rate = OpusAACRate
	}
	c := (*C.vt_tc)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vt_tc{}))))
	if c == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrCodec)
	}
	tc := &Transcoder{c: c, codec: t.Codec, inRate: inRate, channels: channels, rate: rate, tm: timing{rate: rate}}
	if r := C.vt_open_encoder(c, C.int(rate), Quality); r < 0 {
		tc.Close()
		return nil, fmt.Errorf("%w: aac encoder at %d Hz: %s", ErrCodec, rate, avError(r))
	}
	if t.Codec == media.Opus {
		if r := C.vt_open_opus(c); r < 0 {
			tc.Close()
			return nil, fmt.Errorf("%w: opus decoder: %s", ErrCodec, avError(r))
		}
	}
	var asc mpeg4audio.AudioSpecificConfig
	if err := asc.Unmarshal(tc.extradata()); err != nil {
		tc.Close()
		return nil, fmt.Errorf("%w: aac encoder configuration: %w", ErrCodec, err)
	}
	tc.track = &media.Track{Codec: media.AAC, ClockRate: rate, AAC: &asc}
	tc.out = make([]byte, maxOut*maxAACFrame)
	return tc, nil
}

// Track returns the AAC track of the output.
func (t *Transcoder) Track() *media.Track { return t.track }

// Stats returns what the Transcoder has done so far.
func (t *Transcoder) Stats() Stats { return t.stats }

// Horizon returns the time up to which the output is complete: the end of
// the last AAC frame emitted; ok is false before the first.
func (t *Transcoder) Horizon() (time.Duration, bool) { return t.horizon, t.emitted }

func (t *Transcoder) extradata() []byte {
	b := make([]byte, 64)
	n := C.vt_extradata(t.c, (*C.uint8_t)(unsafe.Pointer(&b[0])), C.int(len(b)))
	if n < 0 {
		return nil
	}
	return b[:n]
}

// Unit takes one unit of the input track: its samples go to the encoder,
// at the unit's time (see timing), and each AAC frame that comes out is
// passed to emit, with the unit's track index, times of its first sample
// and memory of its own. A unit that cannot be decoded is dropped with an
// error wrapping ErrDecode; the Transcoder goes on with the next.
func (t *Transcoder) Unit(u *media.Unit, emit func(*media.Unit)) error {
	if t.c == nil || t.eof {
		return ErrClosed
	}
	n, err := t.decode(u.Payload)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	t.stats.Audio += samplesDuration(int64(n), t.rate)
	silence, skip := t.tm.place(u.PTS, u.Time, n)
	if silence > 0 {
		l := len(t.fifo)
		t.fifo = slices.Grow(t.fifo, silence)[:l+silence]
		clear(t.fifo[l:])
	}
	t.fifo = append(t.fifo, t.pcm[skip:n]...)
	t.tm.add(silence + n - skip)
	return t.encode(u.Track, emit, false)
}

// Flush encodes the samples left and drains the encoder, passing the last
// AAC frames to emit. The Transcoder takes no unit after it.
func (t *Transcoder) Flush(track int, emit func(*media.Unit)) error {
	if t.c == nil || t.eof {
		return nil
	}
	if len(t.tm.anchors) == 0 {
		t.eof = true
		return nil
	}
	return t.encode(track, emit, true)
}

// encode gives the encoder every whole frame of the FIFO (and, with last,
// the rest and the end of the stream) and emits what comes out.
func (t *Transcoder) encode(track int, emit func(*media.Unit), last bool) error {
	off := 0
	for len(t.fifo)-off >= 1024 || (last && len(t.fifo) > off) {
		n := min(1024, len(t.fifo)-off)
		if err := t.encodeFrame(track, emit, t.fifo[off:off+n]); err != nil {
			return err
		}
		off += n
	}
	t.fifo = t.fifo[:copy(t.fifo, t.fifo[off:])]
	if last {
		t.eof = true
		return t.encodeFrame(track, emit, nil)
	}
	return nil
}

// encodeFrame gives the encoder one frame of samples (none: the end of
// the stream) and emits the AAC frames that come out.
func (t *Transcoder) encodeFrame(track int, emit func(*media.Unit), samples []float32) error {
	var in *C.float
	if len(samples) > 0 {
		in = (*C.float)(unsafe.Pointer(&samples[0]))
	}
	var sizes [maxOut]C.int
	var ptss [maxOut]C.int64_t
	r := C.vt_encode(t.c, in, C.int(len(samples)), C.int64_t(t.sent),
		(*C.uint8_t)(unsafe.Pointer(&t.out[0])), C.int(len(t.out)), &sizes[0], &ptss[0], maxOut)
	t.sent += int64(len(samples))
	t.stats.CPU = time.Duration(t.c.cpu_ns)
	if r < 0 {
		return fmt.Errorf("%w: %s", ErrEncode, avError(r))
	}
	off := 0
	for i := range int(r) {
		s, size := int64(ptss[i]), int(sizes[i])
		at, wall := t.tm.at(s)
		t.tm.forget(s)
		t.horizon, t.emitted = at+samplesDuration(1024, t.rate), true
		t.stats.Frames++
		emit(&media.Unit{Track: track, PTS: at, DTS: at, Time: wall, Payload: append([]byte(nil), t.out[off:off+size]...)})
		off += size
	}
	return nil
}

// decode puts the samples of one unit, mono at the AAC rate, into t.pcm
// and returns their count.
func (t *Transcoder) decode(payload []byte) (int, error) {
	if t.codec == media.Opus {
		if _, err := audio.OpusSamples(payload); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrDecode, err)
		}
		t.pcm = grow(t.pcm, audio.OpusMaxSamples*t.rate/48000+256)
		r := C.vt_decode(t.c, (*C.uint8_t)(unsafe.Pointer(&payload[0])), C.int(len(payload)),
			(*C.float)(unsafe.Pointer(&t.pcm[0])), C.int(len(t.pcm)))
		t.stats.CPU = time.Duration(t.c.cpu_ns)
		if r < 0 {
			return 0, fmt.Errorf("%w: opus: %s", ErrDecode, avError(r))
		}
		return int(r), nil
	}
	frames := len(payload) / t.channels
	ulaw := t.codec == media.G711U
	dst := &t.pcm
	if t.inRate != t.rate {
		dst = &t.tmp
	}
	*dst = grow(*dst, frames)
	pcm := (*dst)[:frames]
	if t.channels == 1 {
		for i, b := range payload[:frames] {
			pcm[i] = float32(audio.G711Sample(b, ulaw)) / 32768
		}
	} else {
		// Channels are mixed down to mono.
		for i := range pcm {
			sum := 0
			for _, b := range payload[i*t.channels : (i+1)*t.channels] {
				sum += int(audio.G711Sample(b, ulaw))
			}
			pcm[i] = float32(sum) / float32(32768*t.channels)
		}
	}
	if t.inRate == t.rate || frames == 0 {
		return frames, nil
	}
	t.pcm = grow(t.pcm, frames*t.rate/t.inRate+256)
	r := C.vt_resample(t.c, C.int(t.inRate), (*C.float)(unsafe.Pointer(&t.tmp[0])), C.int(frames),
		(*C.float)(unsafe.Pointer(&t.pcm[0])), C.int(len(t.pcm)))
	t.stats.CPU = time.Duration(t.c.cpu_ns)
	if r < 0 {
		return 0, fmt.Errorf("%w: resample: %s", ErrDecode, avError(r))
	}
	return int(r), nil
}

// grow returns b with a length of at least n.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:cap(b)]
}

// Close frees the Transcoder. It is safe to call twice.
func (t *Transcoder) Close() {
	if t.c == nil {
		return
	}
	C.vt_close(t.c)
	C.free(unsafe.Pointer(t.c))
	t.c = nil
}

func avError(code C.int) string {
	var buf [128]C.char
	C.vt_errstr(code, &buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}
