package motion

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// interval is a span of media time from the start of a clip.
type interval struct{ from, to time.Duration }

func (i interval) String() string {
	return fmt.Sprintf("[%.1fs, %.1fs]", i.from.Seconds(), i.to.Seconds())
}

// scene describes a labelled synthetic clip made by FFmpeg: a still,
// noisy picture with an object moving during the motion intervals and
// lighting changes at other times.
type scene struct {
	name     string
	length   time.Duration
	size     string // WxH
	codec    string // "h264" or "h265"
	motion   []interval
	lighting string // eq brightness expression of t, "" for none
	noise    int    // temporal noise strength
}

const sceneFPS = 15

// objectX returns the overlay x expression: the object crosses the picture
// during each motion interval and is off-picture otherwise.
func (s scene) objectX() string {
	expr := "-400"
	for i := len(s.motion) - 1; i >= 0; i-- {
		m := s.motion[i]
		from, to := m.from.Seconds(), m.to.Seconds()
		speed := 500 / (to - from)
		move := fmt.Sprintf("40+(t-%g)*%g", from, speed)
		if i%2 == 1 {
			move = fmt.Sprintf("540-(t-%g)*%g", from, speed)
		}
		expr = fmt.Sprintf("if(between(t,%g,%g),%s,%s)", from, to, move, expr)
	}
	return expr
}

// encode makes the clip with FFmpeg (once per machine: it is kept in
// testenv's clip cache) and returns its units, times starting at base.
func (s scene) encode(t testing.TB, base time.Time) []*media.Unit {
	t.Helper()
	var enable []string
	for _, m := range s.motion {
		enable = append(enable, fmt.Sprintf("between(t,%g,%g)", m.from.Seconds(), m.to.Seconds()))
	}
	graph := fmt.Sprintf("smptehdbars=s=%s:r=%d,format=yuv420p", s.size, sceneFPS)
	if len(enable) > 0 {
		// The object is 48x80 at 640 wide, in proportion at other sizes.
		var w int
		fmt.Sscanf(s.size, "%dx", &w)
		k := float64(w) / 640
		graph += fmt.Sprintf("[bg];testsrc2=s=%dx%d:r=%d,format=yuv420p[obj];[bg][obj]overlay=x='(%s)*%g':y='(140+40*sin(t))*%g':enable='%s'",
			int(48*k)&^1, int(80*k)&^1, sceneFPS, s.objectX(), k, k, strings.Join(enable, "+"))
	}
	if s.lighting != "" {
		graph += fmt.Sprintf(",eq=brightness='%s':eval=frame", s.lighting)
	}
	graph += fmt.Sprintf(",noise=alls=%d:allf=t", s.noise)
	args := []string{"-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", graph,
		"-t", fmt.Sprint(s.length.Seconds()), "-g", "30", "-bf", "0"}
	if s.codec == "h265" {
		args = append(args, "-c:v", "libx265", "-preset", "ultrafast", "-crf", "30",
			"-x265-params", "keyint=30:min-keyint=30:scenecut=0:bframes=0:repeat-headers=1:log-level=error",
			"-bsf:v", "hevc_metadata=aud=insert", "-f", "hevc")
	} else {
		args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-crf", "28",
			"-x264-params", "keyint=30:min-keyint=30:scenecut=0:repeat-headers=1",
			"-bsf:v", "h264_metadata=aud=insert", "-f", "h264")
	}
	out, err := testenv.CachedClip(strings.Join(args, "\x00"), "motion-"+s.name, "."+s.codec, func(path string) error {
		if b, err := exec.Command("ffmpeg", append(args, path)...).CombinedOutput(); err != nil {
			return fmt.Errorf("ffmpeg %s: %v\n%s", s.name, err, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	units := splitUnits(data, s.codec == "h265")
	if len(units) == 0 {
		t.Fatalf("%s: no access units", s.name)
	}
	for i, u := range units {
		u.PTS = time.Duration(i) * time.Second / sceneFPS
		u.DTS = u.PTS
		u.Time = base.Add(u.PTS)
	}
	return units
}

// splitUnits splits an Annex-B stream with access unit delimiters into
// units (delimiters removed).
func splitUnits(data []byte, h265 bool) []*media.Unit {
	var nalus [][]byte
	for len(data) > 0 {
		i := bytes.Index(data, []byte{0, 0, 1})
		if i < 0 {
			break
		}
		data = data[i+3:]
		j := bytes.Index(data, []byte{0, 0, 1})
		n := data
		if j >= 0 {
			n = data[:j]
			data = data[j:]
		} else {
			data = nil
		}
		n = bytes.TrimRight(n, "\x00")
		if len(n) > 0 {
			nalus = append(nalus, n)
		}
	}
	var units []*media.Unit
	var cur *media.Unit
	for _, n := range nalus {
		typ := int(n[0] & 0x1f)
		aud, key := typ == 9, typ == 5
		if h265 {
			typ = int(n[0]>>1) & 0x3f
			aud, key = typ == 35, typ >= 16 && typ <= 21
		}
		if aud {
			cur = &media.Unit{}
			units = append(units, cur)
			continue
		}
		if cur == nil {
			continue
		}
		cur.NALUs = append(cur.NALUs, n)
		cur.Key = cur.Key || key
	}
	return units
}

// intervals turns events into intervals relative to base.
func intervals(evs []Event, base time.Time) []interval {
	var out []interval
	for _, e := range evs {
		out = append(out, interval{e.Start.Sub(base), e.End.Sub(base)})
	}
	return out
}

func overlaps(a, b interval) bool { return a.from <= b.to && b.from <= a.to }

// score returns precision (detected intervals that overlap a true one) and
// recall (true intervals overlapped by a detected one). With nothing to
// find, recall is 1; with nothing found, precision is 1.
func score(truth, found []interval) (precision, recall float64) {
	hit := func(x interval, set []interval) bool {
		for _, y := range set {
			if overlaps(x, y) {
				return true
			}
		}
		return false
	}
	precision, recall = 1, 1
	if len(found) > 0 {
		n := 0
		for _, f := range found {
			if hit(f, truth) {
				n++
			}
		}
		precision = float64(n) / float64(len(found))
	}
	if len(truth) > 0 {
		n := 0
		for _, tr := range truth {
			if hit(tr, found) {
				n++
			}
		}
		recall = float64(n) / float64(len(truth))
	}
	return precision, recall
}
