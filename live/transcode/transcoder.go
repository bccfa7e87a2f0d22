//go:build cgo

package transcode

/*
#cgo pkg-config: libavcodec libswscale libavutil
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/opt.h>
#include <libavutil/imgutils.h>

typedef struct {
	AVCodecContext *dec;
	AVCodecContext *enc;
	AVPacket *in;
	AVPacket *out;
	AVFrame *frame;
	AVFrame *conv;
	struct SwsContext *sws;
	int fps, gop;
	double bpp;
} vt_t;

static int vt_open(vt_t *t, int h265, int fps, int gop, double bpp) {
	// libx264 reports its statistics at every close at the info level.
	if (av_log_get_level() > AV_LOG_ERROR) av_log_set_level(AV_LOG_ERROR);
	const AVCodec *c = avcodec_find_decoder(h265 ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264);
	if (!c) return AVERROR_DECODER_NOT_FOUND;
	if (!avcodec_find_encoder_by_name("libx264")) return AVERROR_ENCODER_NOT_FOUND;
	t->dec = avcodec_alloc_context3(c);
	if (!t->dec) return AVERROR(ENOMEM);
	t->dec->thread_count = 1;
	t->dec->flags |= AV_CODEC_FLAG_LOW_DELAY;
	int r = avcodec_open2(t->dec, c, NULL);
	if (r < 0) return r;
	t->in = av_packet_alloc();
	t->out = av_packet_alloc();
	t->frame = av_frame_alloc();
	if (!t->in || !t->out || !t->frame) return AVERROR(ENOMEM);
	t->fps = fps; t->gop = gop; t->bpp = bpp;
	return 0;
}

// vt_open_enc opens libx264 for pictures of w x h: constrained baseline
// (what every WebRTC H.264 decoder takes), no reordering, no lookahead,
// one thread, SPS and PPS repeated before every keyframe.
static int vt_open_enc(vt_t *t, int w, int h) {
	const AVCodec *c = avcodec_find_encoder_by_name("libx264");
	if (!c) return AVERROR_ENCODER_NOT_FOUND;
	t->enc = avcodec_alloc_context3(c);
	if (!t->enc) return AVERROR(ENOMEM);
	AVCodecContext *e = t->enc;
	e->width = w;
	e->height = h;
	e->pix_fmt = AV_PIX_FMT_YUV420P;
	e->time_base = (AVRational){1, 90000};
	e->framerate = (AVRational){t->fps, 1};
	e->gop_size = t->gop;
	e->max_b_frames = 0;
	e->thread_count = 1;
	int64_t br = (int64_t)((double)w * h * t->fps * t->bpp);
	e->bit_rate = br;
	e->rc_max_rate = br * 3 / 2;
	e->rc_buffer_size = (int)(br);
	av_opt_set(e->priv_data, "preset", "ultrafast", 0);
	av_opt_set(e->priv_data, "tune", "zerolatency", 0);
	av_opt_set(e->priv_data, "profile", "baseline", 0);
	int r = avcodec_open2(e, c, NULL);
	if (r < 0) return r;
	return 0;
}

static void vt_close(vt_t *t) {
	if (t->sws) sws_freeContext(t->sws);
	if (t->conv) av_frame_free(&t->conv);
	if (t->frame) av_frame_free(&t->frame);
	if (t->in) av_packet_free(&t->in);
	if (t->out) av_packet_free(&t->out);
	if (t->enc) avcodec_free_context(&t->enc);
	if (t->dec) avcodec_free_context(&t->dec);
	memset(t, 0, sizeof(*t));
}

// vt_encode hands the decoded picture in t->frame to the encoder,
// converting it to 8-bit 4:2:0 first when it is not.
static int vt_encode(vt_t *t, int64_t pts) {
	AVFrame *f = t->frame;
	if (!t->enc) {
		int r = vt_open_enc(t, f->width, f->height);
		if (r < 0) return r;
	}
	if (f->width != t->enc->width || f->height != t->enc->height) return AVERROR(EINVAL);
	AVFrame *src = f;
	if (f->format != AV_PIX_FMT_YUV420P) {
		if (!t->conv) {
			t->conv = av_frame_alloc();
			if (!t->conv) return AVERROR(ENOMEM);
			t->conv->format = AV_PIX_FMT_YUV420P;
			t->conv->width = f->width;
			t->conv->height = f->height;
			int r = av_frame_get_buffer(t->conv, 0);
			if (r < 0) return r;
		}
		t->sws = sws_getCachedContext(t->sws, f->width, f->height, f->format,
			f->width, f->height, AV_PIX_FMT_YUV420P, SWS_POINT, NULL, NULL, NULL);
		if (!t->sws) return AVERROR(EINVAL);
		int r = av_frame_make_writable(t->conv);
		if (r < 0) return r;
		sws_scale(t->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, t->conv->data, t->conv->linesize);
		src = t->conv;
	}
	src->pts = pts;
	src->pict_type = AV_PICTURE_TYPE_NONE;
	int r = avcodec_send_frame(t->enc, src);
	if (src == f) av_frame_unref(f);
	return r;
}

// vt_push decodes one Annex-B access unit of presentation time pts
// (90 kHz) and encodes every picture that comes out. It returns the
// number of pictures encoded or an error.
static int vt_push(vt_t *t, uint8_t *data, int size, int64_t pts) {
	t->in->data = data;
	t->in->size = size;
	t->in->pts = pts;
	t->in->dts = AV_NOPTS_VALUE;
	int r = avcodec_send_packet(t->dec, t->in);
	t->in->data = NULL;
	t->in->size = 0;
	if (r < 0 && r != AVERROR(EAGAIN)) return r;
	int n = 0;
	for (;;) {
		int g = avcodec_receive_frame(t->dec, t->frame);
		if (g == AVERROR(EAGAIN) || g == AVERROR_EOF) break;
		if (g < 0) return g;
		int64_t p = t->frame->best_effort_timestamp;
		if (p == AV_NOPTS_VALUE) p = t->frame->pts;
		if (p == AV_NOPTS_VALUE) p = pts;
		int e = vt_encode(t, p);
		av_frame_unref(t->frame);
		if (e < 0) return e;
		n++;
	}
	return n;
}

// vt_pull returns the next encoded packet: 1 and its bytes (valid until
// the next call), 0 when none is ready, or an error.
static int vt_pull(vt_t *t, uint8_t **data, int *size, int64_t *pts, int *key) {
	if (!t->enc) return 0;
	av_packet_unref(t->out);
	int r = avcodec_receive_packet(t->enc, t->out);
	if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return 0;
	if (r < 0) return r;
	*data = t->out->data;
	*size = t->out->size;
	*pts = t->out->pts;
	*key = (t->out->flags & AV_PKT_FLAG_KEY) != 0;
	return 1;
}

// vt_drain takes the pictures the decoder still holds (reordering) and
// encodes them; the decoder is then ready for a new keyframe. It returns
// the number of pictures encoded or an error.
static int vt_drain(vt_t *t) {
	int r = avcodec_send_packet(t->dec, NULL);
	if (r < 0 && r != AVERROR_EOF) return r;
	int n = 0;
	for (;;) {
		int g = avcodec_receive_frame(t->dec, t->frame);
		if (g == AVERROR(EAGAIN) || g == AVERROR_EOF) break;
		if (g < 0) { avcodec_flush_buffers(t->dec); return g; }
		int64_t p = t->frame->best_effort_timestamp;
		if (p == AV_NOPTS_VALUE) p = t->frame->pts;
		int e = vt_encode(t, p);
		av_frame_unref(t->frame);
		if (e < 0) { avcodec_flush_buffers(t->dec); return e; }
		n++;
	}
	avcodec_flush_buffers(t->dec);
	return n;
}

static void vt_reset(vt_t *t) {
	avcodec_flush_buffers(t->dec);
}

static void vt_errstr(int code, char *buf, int n) { av_strerror(code, buf, n); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/vigia/vigia/media"
)

// Available reports whether this build can transcode.
func Available() bool { return true }

// Unit is one H.264 access unit out of a Transcoder.
type Unit struct {
	// NALUs are the unit's NAL units, without start codes.
	NALUs [][]byte
	// PTS is the input's presentation time of the picture.
	PTS time.Duration
	// Key is true for an IDR picture (its SPS and PPS come with it).
	Key bool
}

// Transcoder is one camera's H.265 (or H.264) to H.264 transcoder. It is
// not safe for concurrent use.
type Transcoder struct {
	t    *C.vt_t // C memory
	buf  []byte
	wait bool // skip input until a keyframe (start, after an error)
}

// New returns a Transcoder of codec's units (media.H265 or media.H264).
func New(codec media.Codec, opts Options) (*Transcoder, error) {
	if codec != media.H265 && codec != media.H264 {
		return nil, fmt.Errorf("%w: %q", ErrCodec, codec)
	}
	o := opts.withDefaults()
	t := (*C.vt_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vt_t{}))))
	if t == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrTranscode)
	}
	h265 := C.int(0)
	if codec == media.H265 {
		h265 = 1
	}
	if r := C.vt_open(t, h265, C.int(o.FPS), C.int(o.KeyInterval), C.double(o.BitsPerPixel)); r < 0 {
		C.vt_close(t)
		C.free(unsafe.Pointer(t))
		return nil, fmt.Errorf("%w: %s", ErrCodec, avError(r))
	}
	return &Transcoder{t: t, wait: true}, nil
}

// Push transcodes one access unit (decoding order; key when it starts a
// GOP; params, the track's parameter sets, are put in front of a keyframe
// that lacks them) and returns the H.264 units ready, which stay valid
// until the next call. Input before the first keyframe is skipped. After
// an error the Transcoder waits for the next keyframe.
func (t *Transcoder) Push(nalus [][]byte, pts time.Duration, key bool, params [][]byte) ([]Unit, error) {
	if t.t == nil {
		return nil, ErrClosed
	}
	if t.wait && !key {
		return nil, nil
	}
	t.wait = false
	t.buf = t.buf[:0]
	if key {
		t.buf = appendAnnexB(t.buf, params)
	}
	t.buf = appendAnnexB(t.buf, nalus)
	if len(t.buf) == 0 {
		return nil, nil
	}
	var pin runtime.Pinner
	pin.Pin(&t.buf[0])
	r := C.vt_push(t.t, (*C.uint8_t)(unsafe.Pointer(&t.buf[0])), C.int(len(t.buf)), C.int64_t(pts*90000/time.Second))
	pin.Unpin()
	if r < 0 {
		C.vt_reset(t.t)
		t.wait = true
		return nil, fmt.Errorf("%w: %s", ErrTranscode, avError(r))
	}
	return t.pull()
}

// Flush returns the pictures the decoder still holds (a stream with
// B-frames keeps some back), transcoded; the Transcoder then waits for a
// keyframe. Call it at the end of a segment.
func (t *Transcoder) Flush() ([]Unit, error) {
	if t.t == nil {
		return nil, ErrClosed
	}
	t.wait = true
	if r := C.vt_drain(t.t); r < 0 {
		return nil, fmt.Errorf("%w: %s", ErrTranscode, avError(r))
	}
	return t.pull()
}

// pull returns the encoded units ready.
func (t *Transcoder) pull() ([]Unit, error) {
	var out []Unit
	for {
		var data *C.uint8_t
		var size C.int
		var p C.int64_t
		var k C.int
		g := C.vt_pull(t.t, &data, &size, &p, &k)
		if g < 0 {
			return out, fmt.Errorf("%w: %s", ErrTranscode, avError(g))
		}
		if g == 0 {
			return out, nil
		}
		b := C.GoBytes(unsafe.Pointer(data), size)
		out = append(out, Unit{NALUs: splitAnnexB(b), PTS: time.Duration(p) * time.Second / 90000, Key: k != 0})
	}
}

// Close frees the Transcoder. It is safe to call twice.
func (t *Transcoder) Close() {
	if t.t == nil {
		return
	}
	C.vt_close(t.t)
	C.free(unsafe.Pointer(t.t))
	t.t = nil
}

func avError(code C.int) string {
	var buf [128]C.char
	C.vt_errstr(code, &buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}
