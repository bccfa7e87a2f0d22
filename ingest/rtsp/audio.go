package rtsp

import (
	"errors"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
)

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
		a.r.deliver(&media.Unit{Track: a.idx, PTS: pts, DTS: pts, Time: wall, Payload: append([]byte(nil), au...)}, now)
	}
}
