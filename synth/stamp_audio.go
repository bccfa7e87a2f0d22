package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/audio/transcode"
	"github.com/vigia/vigia/media"
)

// The stamp camera's beep (StampConfig.Audio): a tone of BeepHz for
// BeepLength from each whole second of the wall clock, silence between.
// A viewer that hears a beep start at t and sees, at the same moment, a
// picture stamped s knows audio and video are apart by (t - second of the
// beep) - (now - s).
const (
	BeepHz     = 1000
	BeepLength = 100 * time.Millisecond
)

// beepAmplitude is the beep's amplitude, of full scale.
const beepAmplitude = 0.5

// stampAudio is the stamp camera's sound: samples made from the wall
// clock, encoded (µ-law, or AAC-LC through audio/transcode) and sent with
// the wall-clock time of their first sample, as a camera stamps what it
// captured.
type stampAudio struct {
	medi  *description.Media
	rate  int
	codec string
	t0    time.Time // wall time of sample 0
	ts0   uint32    // RTP timestamp of sample 0
	next  int64     // next sample to make
	seq   uint16
	tc    *transcode.Transcoder // AAC only
	enc   *rtpmpeg4audio.Encoder
}

// newStampAudio returns the sound of codec (AudioAAC: 16 kHz mono;
// AudioPCMU: 8 kHz mono).
func newStampAudio(codec string) (*stampAudio, error) {
	a := &stampAudio{codec: codec, ts0: rand.Uint32(), seq: uint16(rand.Uint32())}
	switch codec {
	case AudioPCMU:
		a.rate = 8000
		a.medi = &description.Media{Type: description.MediaTypeAudio,
			Formats: []format.Format{&format.G711{PayloadTyp: 0, MULaw: true, SampleRate: a.rate, ChannelCount: 1}}}
	case AudioAAC:
		a.rate = 16000
		tc, err := transcode.New(&media.Track{Codec: media.G711U, ClockRate: a.rate, Channels: 1})
		if err != nil {
			return nil, fmt.Errorf("stamp camera audio: %w", err)
		}
		a.tc = tc
		a.enc = &rtpmpeg4audio.Encoder{PayloadType: audioPayloadType, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3}
		if err := a.enc.Init(); err != nil {
			tc.Close()
			return nil, err
		}
		a.medi = &description.Media{Type: description.MediaTypeAudio, Formats: []format.Format{&format.MPEG4Audio{
			PayloadTyp: audioPayloadType, ProfileLevelID: 1, Config: tc.Track().AAC,
			SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3}}}
	default:
		return nil, fmt.Errorf("stamp camera audio %q: want %q or %q", codec, AudioAAC, AudioPCMU)
	}
	return a, nil
}

// beep returns sample n of the sound.
func (a *stampAudio) beep(n int64) int16 {
	at := a.t0.Add(time.Duration(n) * time.Second / time.Duration(a.rate))
	if time.Duration(at.UnixNano()%int64(time.Second)) >= BeepLength {
		return 0
	}
	phase := 2 * math.Pi * BeepHz * float64(n) / float64(a.rate)
	return int16(beepAmplitude * 32767 * math.Sin(phase))
}

// packets makes the sound up to now, in packets of 20 ms, and passes each
// RTP packet to send with the wall-clock time of its timestamp.
func (a *stampAudio) packets(now time.Time, send func(*rtp.Packet, time.Time)) {
	per := int64(a.rate / 50)
	pcm := make([]int16, per)
	for now.Sub(a.t0) >= time.Duration(a.next+per)*time.Second/time.Duration(a.rate) {
		for i := range pcm {
			pcm[i] = a.beep(a.next + int64(i))
		}
		ulaw := audio.EncodeG711(nil, pcm, true)
		pts := time.Duration(a.next) * time.Second / time.Duration(a.rate)
		if a.tc == nil {
			a.send(send, ulaw, a.next, pts)
		} else {
			_ = a.tc.Unit(&media.Unit{PTS: pts, DTS: pts, Time: a.t0.Add(pts), Payload: ulaw}, func(u *media.Unit) {
				pkts, err := a.enc.Encode([][]byte{u.Payload})
				if err != nil {
					return
				}
				s := int64(u.PTS) * int64(a.rate) / int64(time.Second)
				for _, p := range pkts {
					a.send(send, p.Payload, s, u.PTS)
				}
			})
		}
		a.next += per
	}
}

// send sends payload, whose first sample is sample s at pts.
func (a *stampAudio) send(send func(*rtp.Packet, time.Time), payload []byte, s int64, pts time.Duration) {
	p := &rtp.Packet{Header: rtp.Header{Version: 2, Marker: true, PayloadType: a.medi.Formats[0].PayloadType(),
		SequenceNumber: a.seq, Timestamp: a.ts0 + uint32(s)}, Payload: payload}
	a.seq++
	send(p, a.t0.Add(pts))
}

func (a *stampAudio) close() {
	if a.tc != nil {
		a.tc.Close()
	}
}
