//go:build cgo

package decoder

/*
#cgo pkg-config: libavcodec libswscale libavutil
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/opt.h>
#include <libavutil/pixfmt.h>

typedef struct {
	AVCodecContext *ctx;
	AVPacket *pkt;
	AVFrame *frame; // newest picture
	AVFrame *tmp;
	struct SwsContext *sws;
	int have;
	// parameters of sws
	int sw, sh, sfmt, srange, dw, dh, dfmt;
} vg_dec;

static int vg_open(vg_dec *d, int h265, int fast) {
	const AVCodec *c = avcodec_find_decoder(h265 ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264);
	if (!c) return AVERROR_DECODER_NOT_FOUND;
	d->ctx = avcodec_alloc_context3(c);
	if (!d->ctx) return AVERROR(ENOMEM);
	d->ctx->thread_count = 1;
	d->ctx->flags |= AV_CODEC_FLAG_LOW_DELAY;
	if (fast) {
		d->ctx->skip_loop_filter = AVDISCARD_ALL;
		d->ctx->flags2 |= AV_CODEC_FLAG2_FAST;
	}
	int r = avcodec_open2(d->ctx, c, NULL);
	if (r < 0) return r;
	d->pkt = av_packet_alloc();
	d->frame = av_frame_alloc();
	d->tmp = av_frame_alloc();
	if (!d->pkt || !d->frame || !d->tmp) return AVERROR(ENOMEM);
	return 0;
}

static void vg_close(vg_dec *d) {
	if (d->sws) sws_freeContext(d->sws);
	if (d->tmp) av_frame_free(&d->tmp);
	if (d->frame) av_frame_free(&d->frame);
	if (d->pkt) av_packet_free(&d->pkt);
	if (d->ctx) avcodec_free_context(&d->ctx);
	memset(d, 0, sizeof(*d));
}

// vg_receive takes every picture the decoder has ready, keeping the newest.
// It returns 1 when a new picture arrived, 0 when none, or an error.
static int vg_receive(vg_dec *d) {
	int got = 0;
	for (;;) {
		int r = avcodec_receive_frame(d->ctx, d->tmp);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) break;
		if (r < 0) return r;
		av_frame_unref(d->frame);
		av_frame_move_ref(d->frame, d->tmp);
		d->have = 1;
		got = 1;
	}
	return got;
}

// vg_decode sends one Annex-B access unit (data is only read during the
// call: the packet is not reference-counted, so libavcodec copies it).
// With still, the decoder is drained and reset afterwards, so that the
// picture of that one unit comes out whatever the decoder's delay.
static int vg_decode(vg_dec *d, uint8_t *data, int size, int still) {
	d->pkt->data = data;
	d->pkt->size = size;
	int r = avcodec_send_packet(d->ctx, d->pkt);
	if (r == AVERROR(EAGAIN)) {
		int g = vg_receive(d);
		if (g < 0) { d->pkt->data = NULL; d->pkt->size = 0; return g; }
		r = avcodec_send_packet(d->ctx, d->pkt);
	}
	d->pkt->data = NULL;
	d->pkt->size = 0;
	if (r < 0) return r;
	int got = vg_receive(d);
	if (still) {
		avcodec_send_packet(d->ctx, NULL);
		int g2 = vg_receive(d);
		avcodec_flush_buffers(d->ctx);
		if (got >= 0 && g2 > 0) got = 1;
		if (got >= 0 && g2 < 0) got = g2;
	}
	return got;
}

static void vg_reset(vg_dec *d) {
	avcodec_flush_buffers(d->ctx);
	av_frame_unref(d->frame);
	d->have = 0;
}

static int vg_width(vg_dec *d) { return d->have ? d->frame->width : 0; }
static int vg_height(vg_dec *d) { return d->have ? d->frame->height : 0; }

// vg_plain maps the deprecated full-range formats to their plain form.
static int vg_plain(int fmt, int *full) {
	switch (fmt) {
	case AV_PIX_FMT_YUVJ420P: *full = 1; return AV_PIX_FMT_YUV420P;
	case AV_PIX_FMT_YUVJ422P: *full = 1; return AV_PIX_FMT_YUV422P;
	case AV_PIX_FMT_YUVJ444P: *full = 1; return AV_PIX_FMT_YUV444P;
	}
	return fmt;
}

// vg_sws returns a scaler for the newest picture to dw x dh in dfmt, full
// range, reusing the previous one when nothing changed.
static struct SwsContext *vg_sws(vg_dec *d, int dw, int dh, int dfmt) {
	AVFrame *f = d->frame;
	int full = f->color_range == AVCOL_RANGE_JPEG;
	int sfmt = vg_plain(f->format, &full);
	if (d->sws && d->sw == f->width && d->sh == f->height && d->sfmt == sfmt &&
	    d->srange == full && d->dw == dw && d->dh == dh && d->dfmt == dfmt) {
		return d->sws;
	}
	if (d->sws) sws_freeContext(d->sws);
	d->sws = sws_alloc_context();
	if (!d->sws) return NULL;
	int flags = (dw == f->width && dh == f->height) ? SWS_POINT : SWS_AREA;
	av_opt_set_int(d->sws, "srcw", f->width, 0);
	av_opt_set_int(d->sws, "srch", f->height, 0);
	av_opt_set_int(d->sws, "src_format", sfmt, 0);
	av_opt_set_int(d->sws, "src_range", full, 0);
	av_opt_set_int(d->sws, "dstw", dw, 0);
	av_opt_set_int(d->sws, "dsth", dh, 0);
	av_opt_set_int(d->sws, "dst_format", dfmt, 0);
	av_opt_set_int(d->sws, "dst_range", 1, 0);
	av_opt_set_int(d->sws, "sws_flags", flags, 0);
	if (sws_init_context(d->sws, NULL, NULL) < 0) {
		sws_freeContext(d->sws);
		d->sws = NULL;
		return NULL;
	}
	d->sw = f->width; d->sh = f->height; d->sfmt = sfmt; d->srange = full;
	d->dw = dw; d->dh = dh; d->dfmt = dfmt;
	return d->sws;
}

// vg_scale writes the newest picture into the given planes (gray: p0 only).
static int vg_scale(vg_dec *d, int dw, int dh, int gray,
                    uint8_t *p0, int s0, uint8_t *p1, int s1, uint8_t *p2, int s2) {
	if (!d->have) return AVERROR(EINVAL);
	struct SwsContext *s = vg_sws(d, dw, dh, gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_YUV420P);
	if (!s) return AVERROR(EINVAL);
	uint8_t *dst[4] = {p0, p1, p2, NULL};
	int ds[4] = {s0, s1, s2, 0};
	return sws_scale(s, (const uint8_t *const *)d->frame->data, d->frame->linesize, 0, d->frame->height, dst, ds);
}

static void vg_errstr(int code, char *buf, int n) { av_strerror(code, buf, n); }

#ifdef __GLIBC__
#include <malloc.h>
#endif

// vg_malloc_setup caps glibc's malloc arenas. glibc gives each thread that
// allocates an arena of its own (up to 8 per core) and keeps what is freed
// there; Go runs cgo calls on whichever thread is free, so over hours every
// thread ends up holding a decoder's worth of freed memory in its arena and
// the resident set creeps up. Two arenas are plenty for a few decoder
// workers. glibc fixes its arena limit when it makes its first extra arena,
// so this runs as a constructor, before the Go runtime starts any thread.
__attribute__((constructor)) static void vg_malloc_setup(void) {
#ifdef __GLIBC__
	mallopt(M_ARENA_MAX, 2);
#endif
}

// vg_malloc_trim hands the free memory of glibc's arenas back to the system
// (the pages of free chunks anywhere in a heap, not only at its top); 1 when
// some was released.
static int vg_malloc_trim(void) {
#ifdef __GLIBC__
	return malloc_trim(0);
#else
	return 0;
#endif
}

// vg_malloc_arenas counts glibc's malloc arenas (the heaps malloc_info
// lists); -1 where that cannot be told.
static int vg_malloc_arenas(void) {
#ifdef __GLIBC__
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f) return -1;
	if (malloc_info(0, f) != 0) { fclose(f); free(buf); return -1; }
	fclose(f);
	int count = 0;
	for (char *p = buf; (p = strstr(p, "<heap nr=")) != NULL; p++) count++;
	free(buf);
	return count;
#else
	return -1;
#endif
}
*/
import "C"

import (
	"fmt"
	"image"
	"runtime"
	"unsafe"

	"github.com/vigia/vigia/media"
)

// mallocArenas is the number of glibc malloc arenas, or -1 when unknown.
func mallocArenas() int { return int(C.vg_malloc_arenas()) }

// ReleaseMemory hands the memory that C allocations (libavcodec's frames and
// contexts) freed back to the system. glibc keeps freed chunks in its arenas
// and returns only what is free at the top of a heap; decoders made and
// closed for every thumbnail leave free chunks in the middle, so without
// this the resident set keeps the arenas' high-water mark. It reports
// whether any memory was released.
func ReleaseMemory() bool { return C.vg_malloc_trim() != 0 }

// Available reports whether this build can decode video.
func Available() bool { return true }

// Decoder decodes one camera's (or one worker's) video access units.
type Decoder struct {
	d     *C.vg_dec // C memory
	codec media.Codec
	buf   []byte
}

// New returns a Decoder for codec (media.H264 or media.H265).
func New(codec media.Codec, opts Options) (*Decoder, error) {
	if codec != media.H264 && codec != media.H265 {
		return nil, fmt.Errorf("%w %q", ErrCodec, codec)
	}
	d := (*C.vg_dec)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vg_dec{}))))
	if d == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrDecode)
	}
	h265, fast := C.int(0), C.int(0)
	if codec == media.H265 {
		h265 = 1
	}
	if opts.Fast {
		fast = 1
	}
	if r := C.vg_open(d, h265, fast); r < 0 {
		C.vg_close(d)
		C.free(unsafe.Pointer(d))
		return nil, fmt.Errorf("%w %s: %s", ErrCodec, codec, avError(r))
	}
	return &Decoder{d: d, codec: codec}, nil
}

// Codec returns the codec the Decoder was made for.
func (d *Decoder) Codec() media.Codec { return d.codec }

// Decode feeds one access unit in decoding order and reports whether a new
// picture came out. The decoder runs with low delay, so a stream without
// B-frames gives its picture at once.
func (d *Decoder) Decode(nalus [][]byte) (bool, error) {
	return d.decode(nalus, false)
}

// DecodeStill decodes one self-contained access unit (a keyframe with its
// parameter sets in-band), drains the decoder and resets it, so the picture
// comes out whatever the stream's reordering. Use it for keyframes alone.
func (d *Decoder) DecodeStill(nalus [][]byte) (bool, error) {
	return d.decode(nalus, true)
}

func (d *Decoder) decode(nalus [][]byte, still bool) (bool, error) {
	if d.d == nil {
		return false, ErrClosed
	}
	var n int
	d.buf, n = appendAnnexB(d.buf, nalus)
	if n == 0 {
		return false, fmt.Errorf("%w: empty access unit", ErrDecode)
	}
	s := C.int(0)
	if still {
		s = 1
	}
	var pin runtime.Pinner
	pin.Pin(&d.buf[0])
	r := C.vg_decode(d.d, (*C.uint8_t)(unsafe.Pointer(&d.buf[0])), C.int(n), s)
	pin.Unpin()
	if r < 0 {
		return false, fmt.Errorf("%w: %s", ErrDecode, avError(r))
	}
	return r > 0, nil
}

// Reset forgets the decoder's state and its picture; decoding resumes at
// the next keyframe.
func (d *Decoder) Reset() {
	if d.d != nil {
		C.vg_reset(d.d)
	}
}

// Size returns the size of the newest picture, zero when there is none.
func (d *Decoder) Size() (width, height int) {
	if d.d == nil {
		return 0, 0
	}
	return int(C.vg_width(d.d)), int(C.vg_height(d.d))
}

// YCbCr returns the newest picture scaled to width (see ScaledSize; 0 keeps
// the picture's size) as full-range 4:2:0.
func (d *Decoder) YCbCr(width int) (*image.YCbCr, error) {
	sw, sh := d.Size()
	if sw == 0 {
		return nil, ErrNoPicture
	}
	w, h := ScaledSize(sw, sh, width)
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	var pin runtime.Pinner
	pin.Pin(&img.Y[0])
	pin.Pin(&img.Cb[0])
	pin.Pin(&img.Cr[0])
	r := C.vg_scale(d.d, C.int(w), C.int(h), 0,
		(*C.uint8_t)(unsafe.Pointer(&img.Y[0])), C.int(img.YStride),
		(*C.uint8_t)(unsafe.Pointer(&img.Cb[0])), C.int(img.CStride),
		(*C.uint8_t)(unsafe.Pointer(&img.Cr[0])), C.int(img.CStride))
	pin.Unpin()
	if r < 0 {
		return nil, fmt.Errorf("%w: %s", ErrScale, avError(r))
	}
	return img, nil
}

// Gray returns the luma of the newest picture scaled to width (see
// ScaledSize), full range, into dst when it has the right size (nil or a
// wrong size allocates a new image).
func (d *Decoder) Gray(width int, dst *image.Gray) (*image.Gray, error) {
	sw, sh := d.Size()
	if sw == 0 {
		return nil, ErrNoPicture
	}
	w, h := ScaledSize(sw, sh, width)
	if dst == nil || dst.Rect.Dx() != w || dst.Rect.Dy() != h || dst.Stride != w {
		dst = image.NewGray(image.Rect(0, 0, w, h))
	}
	var pin runtime.Pinner
	pin.Pin(&dst.Pix[0])
	r := C.vg_scale(d.d, C.int(w), C.int(h), 1,
		(*C.uint8_t)(unsafe.Pointer(&dst.Pix[0])), C.int(dst.Stride), nil, 0, nil, 0)
	pin.Unpin()
	if r < 0 {
		return nil, fmt.Errorf("%w: %s", ErrScale, avError(r))
	}
	return dst, nil
}

// Close frees the decoder. It is safe to call twice.
func (d *Decoder) Close() {
	if d.d == nil {
		return
	}
	C.vg_close(d.d)
	C.free(unsafe.Pointer(d.d))
	d.d = nil
}

func avError(code C.int) string {
	var buf [128]C.char
	C.vg_errstr(code, &buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}
