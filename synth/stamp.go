package synth

import "time"

// The time stamp drawn into the pictures of a StampCamera: StampBits
// blocks of StampBlock×StampBlock pixels in StampRows rows from
// (StampBlock, StampBlock), black for 0 and white for 1, most significant
// bit first. The first 48 bits are the Unix time in milliseconds the
// picture was made; the last 16 are the complement of its low 16 bits, so
// a picture caught between two frames or damaged reads as no stamp.
const (
	StampBlock = 16
	StampBits  = 64
	StampRows  = 2
	stampCols  = StampBits / StampRows
)

// Luma levels of the stamp (video range).
const (
	stampBlack = 16
	stampWhite = 235
	stampGray  = 128
)

func stampWord(t time.Time) uint64 {
	ms := uint64(t.UnixMilli()) & (1<<48 - 1)
	return ms<<16 | (^ms & 0xffff)
}

// stampOrigin returns the top-left pixel of bit i.
func stampOrigin(i int) (x, y int) {
	return StampBlock + (i%stampCols)*StampBlock, StampBlock + (i/stampCols)*StampBlock
}

// DrawStamp draws t into the luma plane y of a picture of the given
// width (stride), which must be at least (stampCols+2)×StampBlock wide and
// (StampRows+2)×StampBlock high.
func DrawStamp(y []byte, width int, t time.Time) {
	w := stampWord(t)
	for i := range StampBits {
		v := byte(stampBlack)
		if w>>(StampBits-1-i)&1 == 1 {
			v = stampWhite
		}
		x0, y0 := stampOrigin(i)
		for r := y0; r < y0+StampBlock; r++ {
			row := y[r*width+x0 : r*width+x0+StampBlock]
			for k := range row {
				row[k] = v
			}
		}
	}
}

// ReadStamp reads the time stamp of a picture whose luma (or any channel
// of a decoded RGB picture) at (x, y) is luma(x, y); ok is false when the
// picture carries no valid stamp.
func ReadStamp(luma func(x, y int) byte) (t time.Time, ok bool) {
	var w uint64
	for i := range StampBits {
		x0, y0 := stampOrigin(i)
		w <<= 1
		if luma(x0+StampBlock/2, y0+StampBlock/2) >= stampGray {
			w |= 1
		}
	}
	ms := w >> 16
	if ^ms&0xffff != w&0xffff {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)), true
}

// StampReaderJS is JavaScript defining vigiaReadStamp(video, canvas): it
// draws the video's current picture into canvas and returns the stamp's
// Unix milliseconds, or null when the picture carries none. It reads
// what ReadStamp reads, at the picture's own size.
const StampReaderJS = `
window.vigiaReadStamp = function (video, canvas) {
  var w = video.videoWidth, h = video.videoHeight;
  if (!w || !h) { return null; }
  var bw = 16, bits = 64, cols = 32;
  var needW = (cols + 2) * bw, needH = 4 * bw;
  canvas.width = needW; canvas.height = needH;
  var ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(video, 0, 0, needW, needH, 0, 0, needW, needH);
  var px = ctx.getImageData(0, 0, needW, needH).data;
  var hi = 0, lo = 0; // 64 bits as two 32-bit halves
  for (var i = 0; i < bits; i++) {
    var x = bw + (i % cols) * bw + bw / 2, y = bw + Math.floor(i / cols) * bw + bw / 2;
    var g = px[(y * needW + x) * 4 + 1];
    var b = g >= 128 ? 1 : 0;
    if (i < 32) { hi = (hi * 2 + b) >>> 0; } else { lo = (lo * 2 + b) >>> 0; }
  }
  // ms = hi (32 bits) << 16 | lo >>> 16; check = lo & 0xffff.
  var msLow = lo >>> 16, check = lo & 0xffff;
  if (((~msLow) & 0xffff) !== check) { return null; }
  return hi * 65536 + msLow;
};
`
