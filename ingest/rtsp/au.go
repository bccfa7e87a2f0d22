package rtsp

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"

	"github.com/vigia/vigia/media"
)

// Errors of depacketization, reported as decode errors; the access unit
// they occur in is dropped whole.
var (
	errPayloadShort    = errors.New("rtp payload too short")
	errFragNoStart     = errors.New("fragment of a nal unit without its start")
	errFragUnfinished  = errors.New("fragmented nal unit not finished")
	errPacketLost      = errors.New("rtp packet of a fragmented nal unit missing")
	errAggregate       = errors.New("invalid aggregation packet")
	errPacketType      = errors.New("rtp packetization type not supported")
	errUnitTooLarge    = errors.New("access unit too large")
	errTooManyNALUs    = errors.New("too many nal units in an access unit")
	errEmptyAccessUnit = errors.New("access unit without nal units")
)

// minSizeHint is the smallest buffer an access unit starts with.
const minSizeHint = 2 << 10

// auAssembler collects the NAL units of one access unit back to back in one
// pooled buffer (media.Buffer). The unit handed on takes that buffer, and
// the pipeline gives it back once the unit is handled; the next unit
// starts with a buffer sized from the last unit of its kind (keyframe or
// not). A frame is copied once, from the read buffer into its own memory.
type auAssembler struct {
	maxSize  int
	maxNALUs int

	// emit receives each complete access unit, its RTP timestamp and the
	// buffer its NAL units are in (the receiver owns it); fail the error of
	// each dropped one.
	emit func(nalus [][]byte, ts uint32, buf *media.Buffer)
	fail func(err error)

	open    bool
	ts      uint32
	pb      *media.Buffer // holds buf's memory
	buf     []byte
	ends    []int // end offset of each finished NAL unit in buf
	cur     int   // start of the NAL unit being added
	inFrag  bool  // the NAL unit at cur is fragmented and not finished
	nextSeq uint16
	key     bool  // the unit holds a keyframe or parameter set
	broken  error // the unit is dropped at its end

	synced bool // an access unit boundary has been seen: errors count
	annexB bool // the camera wraps NAL units in start codes

	hintKey, hintOther int
}

// start opens an access unit at ts.
func (a *auAssembler) start(ts uint32) {
	a.open, a.ts = true, ts
	a.release()
	a.ends, a.cur = a.ends[:0], 0
	a.inFrag, a.key, a.broken = false, false, nil
}

// packet prepares for a packet of timestamp ts: a new timestamp ends the
// open unit (cameras that do not set the marker bit).
func (a *auAssembler) packet(ts uint32) {
	if a.open && ts != a.ts {
		a.finish()
	}
	if !a.open {
		a.start(ts)
	}
}

// drop marks the open unit as broken.
func (a *auAssembler) drop(err error) {
	if a.broken == nil {
		a.broken = err
	}
}

// lostPackets marks the open unit, if any, as missing packets.
func (a *auAssembler) lostPackets() {
	if a.open {
		a.drop(errPacketLost)
	}
}

// markKey notes that the unit is a keyframe: its buffer grows to the size
// of the last keyframe at once.
func (a *auAssembler) markKey() {
	if a.key {
		return
	}
	a.key = true
	if cap(a.buf) < a.hintKey {
		a.grow(a.hintKey - len(a.buf))
	}
}

func (a *auAssembler) grow(n int) {
	need := len(a.buf) + n
	c := max(a.hintOther, minSizeHint)
	if a.key {
		c = max(c, a.hintKey)
	}
	nb := media.GetBuffer(max(c, need))
	copy(nb.B, a.buf)
	a.buf = nb.B[:len(a.buf)]
	if a.pb != nil {
		a.pb.Put()
	}
	a.pb = nb
}

// release gives back the buffer of a unit that is not handed on.
func (a *auAssembler) release() {
	if a.pb != nil {
		a.pb.Put()
	}
	a.pb, a.buf = nil, nil
}

// appendBytes adds b to the NAL unit being built.
func (a *auAssembler) appendBytes(b ...byte) {
	if a.broken != nil {
		return
	}
	if len(a.buf)+len(b) > a.maxSize {
		a.drop(errUnitTooLarge)
		return
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.grow(len(b))
	}
	a.buf = append(a.buf, b...)
}

// beginNALU starts a NAL unit.
func (a *auAssembler) beginNALU() {
	a.cur = len(a.buf)
	if len(a.ends) >= a.maxNALUs {
		a.drop(errTooManyNALUs)
	}
}

// endNALU finishes the NAL unit started at cur.
func (a *auAssembler) endNALU() {
	if a.broken != nil {
		return
	}
	a.ends = append(a.ends, len(a.buf))
}

// whole adds a NAL unit received in one piece.
func (a *auAssembler) whole(nalu []byte) {
	if a.inFrag {
		a.drop(errFragUnfinished)
	}
	a.beginNALU()
	a.appendBytes(nalu...)
	a.endNALU()
}

// fragStart begins a fragmented NAL unit with its reconstructed header.
func (a *auAssembler) fragStart(seq uint16, header []byte, data []byte, end bool) {
	if a.inFrag {
		a.drop(errFragUnfinished)
	}
	a.beginNALU()
	a.appendBytes(header...)
	a.appendBytes(data...)
	a.inFrag, a.nextSeq = !end, seq+1
	if end {
		a.endNALU()
	}
}

// fragMore continues the fragmented NAL unit.
func (a *auAssembler) fragMore(seq uint16, data []byte, end bool) {
	switch {
	case !a.inFrag:
		a.drop(errFragNoStart)
		return
	case seq != a.nextSeq:
		a.drop(errPacketLost)
		a.inFrag = false
		return
	}
	a.appendBytes(data...)
	a.nextSeq++
	if end {
		a.inFrag = false
		a.endNALU()
	}
}

// finish ends the open unit: emitted when whole, dropped (and reported
// once the stream is in step) otherwise.
func (a *auAssembler) finish() {
	if !a.open {
		return
	}
	a.open = false
	wasSynced := a.synced
	a.synced = true
	err := a.broken
	if err == nil && a.inFrag {
		err = errFragUnfinished
	}
	if err == nil && len(a.ends) == 0 {
		err = errEmptyAccessUnit
	}
	if err != nil {
		a.release()
		if wasSynced {
			a.fail(err)
		}
		return
	}
	size := len(a.buf)
	if a.key {
		a.hintKey = size + size/8
	} else {
		a.hintOther = size + size/4
	}
	nalus := make([][]byte, len(a.ends))
	s := 0
	for i, e := range a.ends {
		nalus[i] = a.buf[s:e:e]
		s = e
	}
	pb := a.pb
	a.pb, a.buf = nil, nil
	if a.annexB || a.detectAnnexB(nalus) {
		a.annexB = true
		var err error
		if nalus, err = splitAnnexB(nalus, a.maxNALUs); err != nil {
			pb.Put()
			a.fail(err)
			return
		}
	}
	a.emit(nalus, a.ts, pb)
}

// detectAnnexB reports whether a NAL unit carries start codes: some
// cameras wrap NAL units in them. Valid NAL units never hold 00 00 01
// (emulation prevention), so a unit starting with one, or a small one
// (parameter sets, SEI) holding one, is wrapped.
func (a *auAssembler) detectAnnexB(nalus [][]byte) bool {
	for _, n := range nalus {
		if bytes.HasPrefix(n, []byte{0, 0, 1}) || bytes.HasPrefix(n, []byte{0, 0, 0, 1}) {
			return true
		}
		if len(n) <= 512 && bytes.Contains(n, []byte{0, 0, 0, 1}) {
			return true
		}
	}
	return false
}

// splitAnnexB splits NAL units wrapped in start codes.
func splitAnnexB(nalus [][]byte, maxNALUs int) ([][]byte, error) {
	var out [][]byte
	for _, n := range nalus {
		if !bytes.HasPrefix(n, []byte{0, 0, 1}) && !bytes.HasPrefix(n, []byte{0, 0, 0, 1}) {
			n = append([]byte{0, 0, 0, 1}, n...)
		}
		var ab h264.AnnexB
		if err := ab.Unmarshal(n); err != nil {
			return nil, fmt.Errorf("nal units in start codes: %w", err)
		}
		out = append(out, ab...)
		if len(out) > maxNALUs {
			return nil, errTooManyNALUs
		}
	}
	return out, nil
}
