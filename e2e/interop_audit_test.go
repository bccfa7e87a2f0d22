package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// segmentProbe is what the interop audit reads of one stored segment.
type segmentProbe struct {
	Video, Audio *probeStream
	// Frames are the decoded video frames in presentation order.
	Frames []decodedFrame
	// Packets are the video packets in file (decoding) order.
	Packets []probePacket
	// VideoSpan and AudioSpan are the presentation spans of the tracks
	// (seconds, the file's timeline): first sample to the end of the
	// last, from the packets.
	VideoSpan, AudioSpan [2]float64
	// Decode is what FFmpeg said while decoding every stream: nothing for
	// a good segment.
	Decode string
	// Beeps are the times (s, the file's timeline) where beeps of the
	// audio clip start.
	Beeps []float64
}

type probeStream struct {
	Index      int    `json:"index"`
	CodecType  string `json:"codec_type"`
	CodecName  string `json:"codec_name"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	SampleRate string `json:"sample_rate"`
	Channels   int    `json:"channels"`
	TimeBase   string `json:"time_base"`
	StartTime  string `json:"start_time"`
	Duration   string `json:"duration"`
	Packets    string `json:"nb_read_packets"`
}

func (s *probeStream) start() float64 { v, _ := strconv.ParseFloat(s.StartTime, 64); return v }
func (s *probeStream) dur() float64   { v, _ := strconv.ParseFloat(s.Duration, 64); return v }
func (s *probeStream) count() int     { n, _ := strconv.Atoi(s.Packets); return n }

type probePacket struct {
	Stream   int    `json:"stream_index"`
	PTS      int64  `json:"pts"`
	DTS      int64  `json:"dts"`
	Duration int64  `json:"duration"`
	Flags    string `json:"flags"`
}

// span returns the presentation span of the packets of stream index,
// whose time base is tb ("num/den").
func span(packets []probePacket, index int, tb string) [2]float64 {
	var num, den float64
	if _, err := fmt.Sscanf(tb, "%g/%g", &num, &den); err != nil || den == 0 {
		return [2]float64{}
	}
	first := true
	var sp [2]float64
	for _, pk := range packets {
		if pk.Stream != index {
			continue
		}
		start, end := float64(pk.PTS)*num/den, float64(pk.PTS+pk.Duration)*num/den
		if first || start < sp[0] {
			sp[0] = start
		}
		if first || end > sp[1] {
			sp[1] = end
		}
		first = false
	}
	return sp
}

// decodedFrame is one line of FFmpeg's framemd5 output.
type decodedFrame struct {
	PTS int64 // in the video stream's time base
	MD5 string
}

// probeSegment reads path with ffprobe (streams and packets) and decodes
// it with FFmpeg once: the MD5 of each video frame scaled to 320x180, as
// the clips' references are (clip.md5s), and the audio as PCM, where the
// beeps are found.
func probeSegment(path string) (*segmentProbe, error) {
	out, err := exec.Command("ffprobe", "-v", "error", "-count_packets",
		"-show_entries", "stream=index,codec_type,codec_name,width,height,sample_rate,channels,time_base,start_time,duration,nb_read_packets",
		"-show_entries", "packet=stream_index,pts,dts,duration,flags", "-of", "json", path).Output()
	if err != nil {
		return nil, fmt.Errorf("ffprobe %s: %w", filepath.Base(path), err)
	}
	var raw struct {
		Streams []*probeStream `json:"streams"`
		Packets []probePacket  `json:"packets"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, err
	}
	p := &segmentProbe{}
	for _, s := range raw.Streams {
		switch {
		case s.CodecType == "video" && p.Video == nil:
			p.Video = s
		case s.CodecType == "audio" && p.Audio == nil:
			p.Audio = s
		}
	}
	if p.Video == nil {
		return p, nil
	}
	for _, pk := range raw.Packets {
		if pk.Stream == p.Video.Index {
			p.Packets = append(p.Packets, pk)
		}
	}
	p.VideoSpan = span(raw.Packets, p.Video.Index, p.Video.TimeBase)
	if p.Audio != nil {
		p.AudioSpan = span(raw.Packets, p.Audio.Index, p.Audio.TimeBase)
	}
	// One decoding: the video's frame MD5s on standard output, the first
	// audio stream as mono PCM into a file beside the segment, errors on
	// standard error.
	args := []string{"-hide_banner", "-v", "error", "-copyts", "-i", path,
		"-map", "0:v:0", "-vf", "scale=320:180:flags=neighbor", "-fps_mode", "passthrough", "-enc_time_base", "-1", "-f", "framemd5", "-"}
	pcmPath := path + ".pcm"
	if p.Audio != nil {
		args = append(args, "-map", "0:a:0", "-ac", "1", "-f", "s16le", "-y", pcmPath)
		defer os.Remove(pcmPath)
	}
	cmd := exec.Command("ffmpeg", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ffmpeg decoding %s: %v: %s", filepath.Base(path), err, firstLines(stderr.String(), 5))
	}
	p.Decode = stderr.String()
	for _, line := range strings.Split(stdout.String(), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 6 {
			continue
		}
		pts, _ := strconv.ParseInt(strings.TrimSpace(f[2]), 10, 64)
		p.Frames = append(p.Frames, decodedFrame{PTS: pts, MD5: strings.TrimSpace(f[5])})
	}
	if p.Audio != nil {
		pcm, err := os.ReadFile(pcmPath)
		if err != nil {
			return nil, fmt.Errorf("the audio of %s: %w", filepath.Base(path), err)
		}
		rate, _ := strconv.Atoi(p.Audio.SampleRate)
		for _, at := range beepStarts(pcm, rate) {
			p.Beeps = append(p.Beeps, p.Audio.start()+at)
		}
	}
	return p, nil
}

// beepStarts finds the beeps in PCM (16-bit little-endian, mono, at rate):
// 5 ms windows where the signal crosses zero at more than twice the tone's
// rate. It returns the start of each beep, in seconds from the first
// sample; a beep cut by the start of the audio is left out.
func beepStarts(pcm []byte, rate int) []float64 {
	if rate <= 0 {
		return nil
	}
	n := len(pcm) / 2
	sample := func(i int) int16 { return int16(uint16(pcm[2*i]) | uint16(pcm[2*i+1])<<8) }
	w := rate / 200
	var starts []float64
	in := true // until a window without the beep: a beep cut at the start does not count
	for i := 0; i+w <= n; i += w {
		z := 0
		for j := i + 1; j < i+w; j++ {
			if (sample(j-1) < 0) != (sample(j) < 0) {
				z++
			}
		}
		beep := z*rate/w > 4*toneHz
		if beep && !in {
			starts = append(starts, float64(i)/float64(rate))
		}
		in = beep
	}
	return starts
}

// ticksPerFrame is the video stream's time base ticks per clip frame.
func (p *segmentProbe) ticksPerFrame() int64 {
	var num, den int64
	if _, err := fmt.Sscanf(p.Video.TimeBase, "%d/%d", &num, &den); err != nil || num == 0 {
		return 0
	}
	return den / num / clipFPS
}

// segmentJudgement is what the audit expects of one segment.
type segmentJudgement struct {
	clip *clip
	// first: the segment starts a run (the first of a connection, or the
	// first after a loss): the DTS extractor spaces its first frames' decoding
	// times 1 ms apart until it knows the reorder depth, so its duration
	// is short by that depth; its frame count is not held against it.
	first bool
	// lossy: frames may be missing before its last frame (B-frames whose
	// decoding came after a loss that closed the segment).
	lossy bool
	// audio is the audio configuration expected ("": none).
	audio string
	// audioLate is how much audio the segment may lack at its end, in
	// seconds: a sender that sends its audio later than the video of the
	// same time has it arrive after the keyframe that ends the segment.
	audioLate float64
	// sync judges lip sync: for a peer whose timing is exact (its sender
	// reports and packets agree with its clip).
	sync bool
	// audioLost: the segment ends at a loss, which took audio with it
	// anywhere in it; its span is not judged.
	audioLost bool
}

// judge checks one segment against the clip it was recorded from and
// returns what is wrong, and the clip positions of its first and last
// frames (-1 when unknown).
func (j segmentJudgement) judge(p *segmentProbe) (problems []string, firstPos, lastPos int) {
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	firstPos, lastPos = -1, -1
	cl := j.clip
	if p.Video == nil {
		bad("no video stream")
		return
	}
	if p.Video.CodecName != cl.video.codec {
		bad("video %s, want %s", p.Video.CodecName, cl.video.codec)
	}
	if p.Decode != "" {
		bad("ffmpeg decoding says: %s", firstLines(p.Decode, 5))
	}
	// Frames: every one decoded, each a frame of the clip, in the clip's
	// order without a frame missing, starting at a keyframe.
	if len(p.Frames) != p.Video.count() {
		bad("%d frames decoded from %d packets", len(p.Frames), p.Video.count())
	}
	var pos []int
	for i, f := range p.Frames {
		k, ok := cl.index[f.MD5]
		if !ok {
			bad("frame %d (pts %d) is no frame of the clip: damaged", i, f.PTS)
			return
		}
		pos = append(pos, k)
	}
	if len(pos) == 0 {
		bad("no frames")
		return
	}
	firstPos, lastPos = pos[0], pos[len(pos)-1]
	if pos[0]%clipGOP != 0 {
		bad("starts at frame %d of the clip, not at a keyframe", pos[0])
	}
	tpf := p.ticksPerFrame()
	ptsWrong := false
	for i := 1; i < len(pos); i++ {
		step := pos[i] - pos[i-1]
		inTail := len(pos)-i <= 3
		switch {
		case step <= 0:
			bad("frame %d of the clip presented after frame %d: presentation order lost", pos[i], pos[i-1])
			return
		case step > 1 && !(j.lossy && inTail):
			bad("frames %d to %d of the clip missing inside the segment", pos[i-1]+1, pos[i]-1)
			return
		}
		// Presentation times follow the clip's frames one interval apart
		// (within 1 %).
		if d := p.Frames[i].PTS - p.Frames[i-1].PTS; tpf > 0 && absI64(d-int64(step)*tpf) > tpf/100 && !ptsWrong {
			bad("frames %d and %d of the clip presented %d ticks apart, want %d", pos[i-1], pos[i], d, int64(step)*tpf)
			ptsWrong = true
		}
	}
	// One picture size in a segment, the one of its init.
	part := len(cl.md5s) / len(cl.video.sizes)
	size := cl.video.sizes[pos[0]/part]
	if pos[len(pos)-1]/part != pos[0]/part {
		bad("frames of two picture sizes in one segment (frames %d to %d)", pos[0], pos[len(pos)-1])
	}
	if p.Video.Width != size[0] || p.Video.Height != size[1] {
		bad("init says %dx%d, frames are %dx%d", p.Video.Width, p.Video.Height, size[0], size[1])
	}
	// Composition offsets: decoding never after presentation, and with
	// B-frames presentation differs from decoding order.
	reordered := false
	for _, pk := range p.Packets {
		if pk.DTS > pk.PTS {
			bad("a packet decoded at %d after its presentation at %d", pk.DTS, pk.PTS)
			break
		}
		reordered = reordered || pk.PTS != pk.DTS
	}
	if cl.video.bframes && len(p.Packets) > clipGOP && !reordered {
		bad("B-frames in the clip, but every frame is presented when decoded")
	}
	// Frame count against duration × frame rate, within 1 %.
	if !j.first {
		want := p.Video.dur() * clipFPS
		if got := float64(p.Video.count()); math.Abs(got-want) > want/100 {
			bad("%d frames in %.3f s, want %.1f at %d fps", p.Video.count(), p.Video.dur(), want, clipFPS)
		}
	}
	// Audio of the configuration asked for, from the video's start to its
	// end, within an audio frame and a video frame.
	if j.audio == "" {
		if p.Audio != nil {
			bad("audio %s, want none", p.Audio.CodecName)
		}
		return
	}
	a := audioConfigs[j.audio]
	switch {
	case p.Audio == nil:
		bad("no audio, want %s", j.audio)
	case p.Audio.CodecName != "aac" || p.Audio.SampleRate != strconv.Itoa(a.rate) || p.Audio.Channels != a.channels:
		bad("audio %s %s Hz %d channels, want aac %d Hz %d channels", p.Audio.CodecName, p.Audio.SampleRate, p.Audio.Channels, a.rate, a.channels)
	default:
		// The audio of a connection starts with its first packet: the
		// first segment's may start late.
		tol := 1024/float64(a.rate) + 1/float64(clipFPS)
		as, vs := p.AudioSpan, p.VideoSpan
		if !j.audioLost && ((!j.first && as[0] > vs[0]+tol) || as[0] < vs[0]-tol || as[1] < vs[1]-tol-j.audioLate || as[1] > vs[1]+tol) {
			bad("audio spans %.3f-%.3f s, video %.3f-%.3f s", as[0], as[1], vs[0], vs[1])
		}
		if j.sync {
			offs := j.syncOffsets(p, pos)
			// The clip beeps every second: a segment of 1.5 s or more
			// holds a whole beep and the frame it goes with.
			if len(offs) == 0 && vs[1]-vs[0] >= 1.5 {
				bad("no beep found in %.1f s of audio (sync not judged)", as[1]-as[0])
			}
			for _, off := range offs {
				if off < -syncEarly || off > syncLate {
					bad("audio %+.0f ms off the video (a beep against its frame)", off*1000)
					break
				}
			}
		}
	}
	return problems, firstPos, lastPos
}

// The largest lip-sync errors allowed, in seconds: what a viewer does not
// notice (ITU-R BT.1359: sound 45 ms before the picture, 125 ms after).
const (
	syncEarly = 0.045
	syncLate  = 0.125
)

// syncOffsets returns, for each beep of the segment, how far it is from
// the video frame it goes with (frame clipFPS × k for the beep of second
// k), in seconds; positive when the audio is late. pos are the clip
// positions of the segment's frames, in presentation order.
func (j segmentJudgement) syncOffsets(p *segmentProbe, pos []int) []float64 {
	if len(pos) < 2 || len(p.Frames) != len(pos) {
		return nil
	}
	tb := 1 / float64(p.ticksPerFrame()*clipFPS)
	at := map[int]float64{} // clip position → presentation time
	for i, k := range pos {
		at[k] = float64(p.Frames[i].PTS) * tb
	}
	t0, p0 := at[pos[0]], pos[0]
	var offs []float64
	for _, b := range p.Beeps {
		// The second of the clip the beep falls in, and its first frame.
		k := math.Round((float64(p0) + (b-t0)*clipFPS) / clipFPS)
		if t, ok := at[int(k)*clipFPS]; ok {
			offs = append(offs, b-t)
		}
	}
	return offs
}

func absI64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// clipPositions returns the clip positions of the segment's frames, -1 for
// a frame that is not the clip's.
func clipPositions(cl *clip, p *segmentProbe) []int {
	pos := make([]int, len(p.Frames))
	for i, f := range p.Frames {
		k, ok := cl.index[f.MD5]
		if !ok {
			k = -1
		}
		pos[i] = k
	}
	return pos
}
