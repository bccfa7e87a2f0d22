package rtsp

import (
	"errors"
	"fmt"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// Errors of audio depacketization, reported as decode errors; the packet
// is dropped.
var (
	errG711Size  = errors.New("g711 payload is not a whole number of samples")
	errEmptyUnit = errors.New("empty audio payload")
)

// newAudioHandler returns the packet handler of an audio track: AAC (RFC
// 3640), G.711 (RFC 3551) or Opus (RFC 7587).
func newAudioHandler(r *reader, idx int, f format.Format) (packetHandler, error) {
	switch f := f.(type) {
	case *format.MPEG4Audio:
		dec, err := f.CreateDecoder()
		if err != nil {
			return nil, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("aac track: %w", err))
		}
		return &aacTrack{r: r, idx: idx, rate: f.ClockRate(), dec: dec}, nil
	case *format.G711:
		channels := max(f.ChannelCount, 1)
		return &g711Track{r: r, idx: idx, rate: f.SampleRate, channels: channels,
			unit: max(1, f.SampleRate*int(g711UnitDuration/time.Millisecond)/1000) * channels}, nil
	case *format.Opus:
		return &frameAudioTrack{r: r, idx: idx, rate: 48000, check: func(b []byte) error {
			_, err := audio.OpusSamples(b)
			return err
		}}, nil
	}
	return nil, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("no depacketizer for %s", f.Codec()))
}

// g711UnitDuration is how much G.711 a unit gathers: the samples of
// consecutive packets (20 ms each, usually) go in one unit, a third of the
// units to hand on and transcode, for at most 40 ms more before the AAC
// frame they complete comes out.
const g711UnitDuration = 60 * time.Millisecond

// g711Track turns the RTP of a G.711 track into units of the samples of
// consecutive packets, at least g711UnitDuration (a packet that does not
// follow the one before on the RTP clock ends the unit before it), with
// the video's time axis; audio before the first video frame is dropped.
type g711Track struct {
	r        *reader
	idx      int
	rate     int
	channels int
	unit     int // bytes that end a unit

	buf  []byte    // samples of the unit being gathered
	ts   uint32    // its first sample's timestamp
	next uint32    // the timestamp that follows it
	at   time.Time // when its first packet came
}

func (g *g711Track) packet(p *rtpPacket, now time.Time) {
	switch {
	case len(p.payload) == 0:
		g.r.decodeError(errEmptyUnit)
		return
	case len(p.payload)%g.channels != 0:
		g.r.decodeError(fmt.Errorf("%w: %d bytes, %d channels", errG711Size, len(p.payload), g.channels))
		return
	}
	if len(g.buf) > 0 && p.ts != g.next {
		g.flush(now)
	}
	if len(g.buf) == 0 {
		g.ts, g.at = p.ts, now
		g.buf = make([]byte, 0, max(g.unit, len(p.payload)))
	}
	g.buf = append(g.buf, p.payload...)
	g.next = p.ts + uint32(len(p.payload)/g.channels)
	if len(g.buf) >= g.unit {
		g.flush(now)
	}
}

// flush hands on the unit gathered; now is the arrival of the packet
// that ends it.
func (g *g711Track) flush(now time.Time) {
	buf := g.buf
	g.buf = nil
	pts, wall, ok := g.r.otherTime(g.idx, g.ts, g.rate, g.at)
	if !ok {
		return // before the first video frame
	}
	g.r.deliver(&media.Unit{Track: g.idx, PTS: pts, DTS: pts, Time: wall, Payload: buf}, now)
}

// frameAudioTrack turns the RTP of a track that carries one unit per
// packet (an Opus packet) into units, with the video's time axis; audio
// before the first video frame is dropped. The packet's timestamp is the
// time of its first sample.
type frameAudioTrack struct {
	r     *reader
	idx   int
	rate  int
	check func([]byte) error // checks a payload; an error drops it
}

func (a *frameAudioTrack) packet(p *rtpPacket, now time.Time) {
	if len(p.payload) == 0 {
		a.r.decodeError(errEmptyUnit)
		return
	}
	if err := a.check(p.payload); err != nil {
		a.r.decodeError(err)
		return
	}
	pts, wall, ok := a.r.otherTime(a.idx, p.ts, a.rate, now)
	if !ok {
		return // before the first video frame
	}
	// The payload points into the read buffer: the unit gets a copy.
	a.r.deliver(&media.Unit{Track: a.idx, PTS: pts, DTS: pts, Time: wall, Payload: append([]byte(nil), p.payload...)}, now)
}

// aacTrack turns the RTP of an AAC track (RFC 3640) into units, with the
// video's time axis; audio before the first video frame is dropped.
type aacTrack struct {
	r    *reader
	idx  int
	rate int
	dec  *rtpmpeg4audio.Decoder
	pkt  rtp.Packet // the decoder's view of the packet being handled

	// frags holds the payloads of the packets that end no access unit
	// (fragments of one split over several packets): the decoder keeps
	// them until the last fragment arrives, and by then the buffer the
	// packet came in (the session's read buffer) holds other packets.
	frags []byte
	fix   aacFragments // fragments sized the RFC 3640 way
}

func (a *aacTrack) packet(p *rtpPacket, now time.Time) {
	payload := p.payload
	if !p.marker {
		n := len(a.frags)
		a.frags = append(a.frags, payload...)
		// Earlier fragments stay where they are if append moves frags.
		payload = a.frags[n:len(a.frags):len(a.frags)]
	}
	a.fix.normalize(payload, p.marker, a.dec.SizeLength, a.dec.IndexLength)
	a.pkt.Marker, a.pkt.SequenceNumber, a.pkt.Timestamp, a.pkt.Payload = p.marker, p.seq, p.ts, payload
	aus, err := a.dec.Decode(&a.pkt)
	a.pkt.Payload = nil
	if !errors.Is(err, rtpmpeg4audio.ErrMorePacketsNeeded) {
		a.frags = a.frags[:0] // the decoder holds no fragment
	}
	if err != nil {
		if !errors.Is(err, rtpmpeg4audio.ErrMorePacketsNeeded) {
			a.r.decodeError(err)
		}
		return
	}
	for i, au := range aus {
		pts, wall, ok := a.r.otherTime(a.idx, p.ts+uint32(i*1024), a.rate, now)
		if !ok {
			return // before the first video frame
		}
		// The decoder's units point into the read buffer: each gets a copy.
		a.r.deliver(&media.Unit{Track: a.idx, PTS: pts, DTS: pts, Time: wall, Payload: append([]byte(nil), au...)}, now)
	}
}
