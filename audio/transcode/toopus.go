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
	AVCodecContext *dec;  // AAC
	AVCodecContext *enc;  // libopus, mono, 48 kHz
	SwrContext *swr;      // to mono float at 48 kHz, made at first use
	AVFrame *out;         // the decoder's output
	AVFrame *in;          // the encoder's input
	AVPacket *dpkt;       // the decoder's input
	AVPacket *pkt;        // the encoder's output
	int swr_fmt, swr_rate, swr_channels;
	int64_t cpu_ns;       // thread CPU time spent in the calls below
} vo_tc;

static int64_t vo_thread_ns(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void vo_close(vo_tc *t) {
	swr_free(&t->swr);
	av_frame_free(&t->in);
	av_frame_free(&t->out);
	av_packet_free(&t->pkt);
	av_packet_free(&t->dpkt);
	avcodec_free_context(&t->enc);
	avcodec_free_context(&t->dec);
	memset(t, 0, sizeof(*t));
}

// vo_open opens libavcodec's native AAC decoder for the AudioSpecificConfig
// asc and libopus for mono 48 kHz in frames of 960 samples (20 ms), at
// bitrate, in its low-delay mode (CELT only: 2.5 ms of lookahead), at
// complexity 5 of 10 (libopus's default, 10, costs a quarter more of the
// whole transcode for a camera's sound; BenchmarkToOpus). It returns
// the encoder's lookahead in samples, or an error.
static int vo_open(vo_tc *t, const uint8_t *asc, int asc_size, int bitrate) {
	const AVCodec *dc = avcodec_find_decoder(AV_CODEC_ID_AAC);
	if (!dc) return AVERROR_DECODER_NOT_FOUND;
	const AVCodec *ec = avcodec_find_encoder_by_name("libopus");
	if (!ec) return AVERROR_ENCODER_NOT_FOUND;
	AVCodecContext *d = avcodec_alloc_context3(dc);
	if (!d) return AVERROR(ENOMEM);
	t->dec = d;
	d->extradata = av_mallocz(asc_size + AV_INPUT_BUFFER_PADDING_SIZE);
	if (!d->extradata) return AVERROR(ENOMEM);
	memcpy(d->extradata, asc, asc_size);
	d->extradata_size = asc_size;
	d->thread_count = 1;
	d->log_level_offset = 24;
	int r = avcodec_open2(d, dc, NULL);
	if (r < 0) return r;

	AVCodecContext *e = avcodec_alloc_context3(ec);
	if (!e) return AVERROR(ENOMEM);
	t->enc = e;
	e->sample_rate = 48000;
	e->sample_fmt = AV_SAMPLE_FMT_FLT;
	av_channel_layout_default(&e->ch_layout, 1);
	e->time_base = (AVRational){1, 48000};
	e->bit_rate = bitrate;
	e->frame_size = 960;
	e->compression_level = 5;
	e->thread_count = 1;
	e->log_level_offset = 24;
	AVDictionary *opts = NULL;
	av_dict_set(&opts, "application", "lowdelay", 0);
	av_dict_set(&opts, "frame_duration", "20", 0);
	r = avcodec_open2(e, ec, &opts);
	av_dict_free(&opts);
	if (r < 0) return r;
	if (e->frame_size != 960) return AVERROR(EINVAL);

	t->out = av_frame_alloc();
	t->in = av_frame_alloc();
	t->dpkt = av_packet_alloc();
	t->pkt = av_packet_alloc();
	if (!t->out || !t->in || !t->dpkt || !t->pkt) return AVERROR(ENOMEM);
	t->in->format = AV_SAMPLE_FMT_FLT;
	av_channel_layout_default(&t->in->ch_layout, 1);
	t->in->sample_rate = 48000;
	t->in->nb_samples = 960;
	r = av_frame_get_buffer(t->in, 0);
	if (r < 0) return r;
	return e->initial_padding;
}

static int vo_swr(vo_tc *t, int fmt, int channels, int rate) {
	if (t->swr && t->swr_fmt == fmt && t->swr_channels == channels && t->swr_rate == rate) return 0;
	swr_free(&t->swr);
	AVChannelLayout in, mono;
	av_channel_layout_default(&in, channels);
	av_channel_layout_default(&mono, 1);
	int r = swr_alloc_set_opts2(&t->swr, &mono, AV_SAMPLE_FMT_FLT, 48000, &in, fmt, rate, 0, NULL);
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

// vo_decode decodes one AAC frame (data is only read during the call) and
// writes its samples, mono float at 48 kHz, into out (cap samples). It
// returns the count written, or an error.
static int vo_decode(vo_tc *t, const uint8_t *data, int size, float *out, int cap) {
	int64_t c0 = vo_thread_ns();
	t->dpkt->data = (uint8_t *)data;
	t->dpkt->size = size;
	int r = avcodec_send_packet(t->dec, t->dpkt);
	t->dpkt->data = NULL;
	t->dpkt->size = 0;
	int n = 0;
	while (r >= 0) {
		r = avcodec_receive_frame(t->dec, t->out);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) {
			r = 0;
			break;
		}
		if (r < 0) break;
		AVFrame *f = t->out;
		r = vo_swr(t, f->format, f->ch_layout.nb_channels, f->sample_rate);
		if (r >= 0) {
			uint8_t *op[1] = {(uint8_t *)(out + n)};
			r = swr_convert(t->swr, op, cap - n, (const uint8_t **)f->extended_data, f->nb_samples);
		}
		av_frame_unref(f);
		if (r < 0) break;
		n += r;
	}
	t->cpu_ns += vo_thread_ns() - c0;
	return r < 0 ? r : n;
}

// vo_encode encodes one frame of 960 samples and copies the Opus packet
// that comes out into out (cap bytes). It returns its size, 0 when the
// encoder gave none, or an error.
static int vo_encode(vo_tc *t, const float *samples, int64_t pts, uint8_t *out, int cap) {
	int64_t c0 = vo_thread_ns();
	int r = av_frame_make_writable(t->in);
	if (r >= 0) {
		memcpy(t->in->data[0], samples, 960 * sizeof(float));
		t->in->pts = pts;
		r = avcodec_send_frame(t->enc, t->in);
	}
	int size = 0;
	while (r >= 0) {
		r = avcodec_receive_packet(t->enc, t->pkt);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) {
			r = 0;
			break;
		}
		if (r < 0) break;
		if (size == 0 && t->pkt->size <= cap) {
			memcpy(out, t->pkt->data, t->pkt->size);
			size = t->pkt->size;
		}
		av_packet_unref(t->pkt);
	}
	t->cpu_ns += vo_thread_ns() - c0;
	return r < 0 ? r : size;
}

static void vo_errstr(int code, char *buf, int n) { av_strerror(code, buf, n); }
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/vigia/vigia/media"
)

// OpusBitrate is the bit rate of the Opus a ToOpus encodes: mono, 32
// kbit/s, transparent for a camera's sound.
const OpusBitrate = 32000

// opusFrame is the samples of one Opus frame (20 ms at 48 kHz).
const opusFrame = 960

// maxOpusPacket bounds one Opus packet of a frame at OpusBitrate (80
// bytes on average; libopus never makes one over 1275).
const maxOpusPacket = 1500

// reanchorAfter is how far a unit's time may stray from where the samples
// before it end before the output is placed at the unit's time again (a
// gap in the camera's audio, a new run).
const reanchorAfter = 40 * time.Millisecond

// OpusPacket is one Opus packet of 20 ms out of a ToOpus.
type OpusPacket struct {
	// PTS is the time, on the input's clock, of the packet's first
	// decoded sample: a decoder's output of the packet, played at PTS,
	// plays the input in time (the encoder's lookahead is taken off).
	PTS time.Duration
	// Payload is the Opus packet, of memory of its own.
	Payload []byte
}

// ToOpus turns the AAC frames of one track into Opus packets of 20 ms,
// mono, 48 kHz (WebRTC's audio): the AAC is decoded by libavcodec,
// resampled to 48 kHz by libswresample and encoded by libopus. It is not
// safe for concurrent use.
type ToOpus struct {
	c         *C.vo_tc
	lookahead time.Duration

	fifo []float32 // samples not yet encoded: fewer than a frame between calls
	pcm  []float32 // one unit's samples at 48 kHz
	out  []byte

	// The time of fifo[0] on the input's clock, and where the samples
	// taken in end; started after the first unit.
	at, end time.Duration
	started bool
	sent    int64 // samples given to the encoder
	stats   Stats
}

// NewToOpus returns a ToOpus for t, an AAC track.
func NewToOpus(t *media.Track) (*ToOpus, error) {
	if t == nil || t.Codec != media.AAC || t.AAC == nil {
		return nil, fmt.Errorf("%w: want AAC with its configuration", ErrCodec)
	}
	asc, err := t.AAC.Marshal()
	if err != nil || len(asc) == 0 {
		return nil, fmt.Errorf("%w: aac configuration: %v", ErrCodec, err)
	}
	c := (*C.vo_tc)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vo_tc{}))))
	if c == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrCodec)
	}
	o := &ToOpus{c: c, out: make([]byte, maxOpusPacket)}
	r := C.vo_open(c, (*C.uint8_t)(unsafe.Pointer(&asc[0])), C.int(len(asc)), OpusBitrate)
	if r < 0 {
		o.Close()
		return nil, fmt.Errorf("%w: aac decoder or opus encoder: %s", ErrCodec, voError(r))
	}
	o.lookahead = samplesDuration(int64(r), 48000)
	return o, nil
}

// Stats returns what the ToOpus has done so far (Frames counts Opus
// packets).
func (o *ToOpus) Stats() Stats { return o.stats }

// Unit takes one AAC frame: its samples are placed at the unit's PTS
// (following the samples before it unless it strays more than 40 ms from
// where they end: then the frame in progress is finished with silence and
// the output goes on from the unit's time) and each Opus packet completed
// is passed to emit. A frame that cannot be decoded is dropped with an
// error wrapping ErrDecode; the ToOpus goes on with the next.
func (o *ToOpus) Unit(u *media.Unit, emit func(OpusPacket)) error {
	if o.c == nil {
		return ErrClosed
	}
	if len(u.Payload) == 0 {
		return nil
	}
	o.pcm = grow(o.pcm, 8*2048+256)
	r := C.vo_decode(o.c, (*C.uint8_t)(unsafe.Pointer(&u.Payload[0])), C.int(len(u.Payload)),
		(*C.float)(unsafe.Pointer(&o.pcm[0])), C.int(len(o.pcm)))
	o.stats.CPU = time.Duration(o.c.cpu_ns)
	if r < 0 {
		return fmt.Errorf("%w: aac: %s", ErrDecode, voError(r))
	}
	n := int(r)
	if n == 0 {
		return nil
	}
	o.stats.Audio += samplesDuration(int64(n), 48000)
	if d := u.PTS - o.end; !o.started || d > reanchorAfter || d < -reanchorAfter {
		if len(o.fifo) > 0 {
			// Finish the frame in progress with silence.
			l := len(o.fifo)
			o.fifo = append(o.fifo, make([]float32, opusFrame-l)...)
			if err := o.encode(emit); err != nil {
				return err
			}
		}
		o.at, o.started = u.PTS, true
	}
	o.fifo = append(o.fifo, o.pcm[:n]...)
	o.end = o.at + samplesDuration(int64(len(o.fifo)), 48000)
	return o.encode(emit)
}

// encode encodes every whole frame of the FIFO and emits the packets.
func (o *ToOpus) encode(emit func(OpusPacket)) error {
	off := 0
	for len(o.fifo)-off >= opusFrame {
		at := o.at + samplesDuration(int64(off), 48000)
		r := C.vo_encode(o.c, (*C.float)(unsafe.Pointer(&o.fifo[off])), C.int64_t(o.sent),
			(*C.uint8_t)(unsafe.Pointer(&o.out[0])), C.int(len(o.out)))
		o.stats.CPU = time.Duration(o.c.cpu_ns)
		o.sent += opusFrame
		off += opusFrame
		if r < 0 {
			return fmt.Errorf("%w: opus: %s", ErrEncode, voError(r))
		}
		if r == 0 {
			continue
		}
		o.stats.Frames++
		emit(OpusPacket{PTS: at - o.lookahead, Payload: append([]byte(nil), o.out[:r]...)})
	}
	o.at += samplesDuration(int64(off), 48000)
	o.fifo = o.fifo[:copy(o.fifo, o.fifo[off:])]
	return nil
}

// Close frees the ToOpus. It is safe to call twice.
func (o *ToOpus) Close() {
	if o.c == nil {
		return
	}
	C.vo_close(o.c)
	C.free(unsafe.Pointer(o.c))
	o.c = nil
}

func voError(code C.int) string {
	var buf [128]C.char
	C.vo_errstr(code, &buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}
