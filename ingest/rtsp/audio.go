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
		return &frameAudioTrack{r: r, idx: idx, rate: f.SampleRate, check: func(b []byte) error {
			if len(b)%channels != 0 {
				return fmt.Errorf("%w: %d bytes, %d channels", errG711Size, len(b), channels)
			}
			return nil
		}}, nil
	case *format.Opus:
		return &frameAudioTrack{r: r, idx: idx, rate: 48000, check: func(b []byte) error {
			_, err := audio.OpusSamples(b)
			return err
		}}, nil
	}
	return nil, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("no depacketizer for %s", f.Codec()))
}

// frameAudioTrack turns the RTP of a track that carries one unit per
// packet (G.711 samples, an Opus packet) into units, with the video's time
// axis; audio before the first video frame is dropped. The packet's
// timestamp is the time of its first sample.
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
	a.r.deliver(&media.Unit{Track: a.idx, PTS: pts, DTS: pts, Time: wall, Payload: append([]byte(nil), p.payload...)})
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
}

func (a *aacTrack) packet(p *rtpPacket, now time.Time) {
	payload := p.payload
	if !p.marker {
		n := len(a.frags)
		a.frags = append(a.frags, payload...)
		// Earlier fragments stay where they are if append moves frags.
		payload = a.frags[n:len(a.frags):len(a.frags)]
	}
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
		a.r.deliver(&media.Unit{Track: a.idx, PTS: pts, DTS: pts, Time: wall, Payload: append([]byte(nil), au...)})
	}
}
