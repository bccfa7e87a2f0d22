package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// mediamtxStopGrace is how long MediaMTX gets to finish its segments after
// SIGTERM: hundreds of cameras close their files at once.
const mediamtxStopGrace = 60 * time.Second

// mediamtxStart parses the start of a MediaMTX segment from its file name
// (%Y-%m-%d_%H-%M-%S-%f of its recordPath, local time, microseconds).
func mediamtxStart(name string) (time.Time, error) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || len(name)-i-1 != 6 {
		return time.Time{}, fmt.Errorf("segment file name %q", name)
	}
	t, err := time.ParseInLocation("2006-01-02_15-04-05", name[:i], time.Local)
	if err != nil {
		return time.Time{}, err
	}
	us, err := strconv.Atoi(name[i+1:])
	if err != nil || us < 0 {
		return time.Time{}, fmt.Errorf("segment file name %q", name)
	}
	return t.Add(time.Duration(us) * time.Microsecond), nil
}

// mediamtxConfig is a MediaMTX configuration that records like Vigia:
// fMP4 segments of segment with parts of 1 s, each camera pulled over
// RTSP/TCP, under dir/PATH/; no other server (no API, HLS, WebRTC, SRT,
// RTMP, MoQ), RTSP on rtsp (TCP only, a free port).
func mediamtxConfig(rtsp, dir string, segment time.Duration, urls []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `logLevel: warn
api: no
metrics: no
pprof: no
playback: no
hls: no
webrtc: no
srt: no
rtmp: no
moq: no
rtspTransports: [tcp]
rtspAddress: %s
pathDefaults:
  record: yes
  recordFormat: fmp4
  recordPath: %s/%%path/%%Y-%%m-%%d_%%H-%%M-%%S-%%f
  recordPartDuration: 1s
  recordSegmentDuration: %s
`, rtsp, dir, segment)
	if len(urls) == 0 {
		b.WriteString("paths: {}\n")
	} else {
		b.WriteString("paths:\n")
	}
	for i, u := range urls {
		fmt.Fprintf(&b, "  cam-%d: {source: %q, rtspTransport: tcp}\n", i+1, u)
	}
	return b.String()
}

// startMediaMTX writes the configuration into dir and starts bin there.
func startMediaMTX(bin, dir string, segment time.Duration, urls []string) (*child, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "mediamtx.yml")
	body := mediamtxConfig(fmt.Sprintf("127.0.0.1:%d", port), filepath.Join(dir, "rec"), segment, urls)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, conf)
	cmd.Dir = dir
	return startChild("mediamtx", cmd)
}

// mediamtxBaseRSS is MediaMTX's resident set with no camera, in MiB: the
// base its per-camera memory is counted from, as Vigia's is from its
// resident set before the cameras are added.
func mediamtxBaseRSS(ctx context.Context, bin, dir string) (float64, error) {
	c, err := startMediaMTX(bin, dir, time.Minute, nil)
	if err != nil {
		return 0, err
	}
	defer c.stop(stopGrace)
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-c.done:
		return 0, c.exitError()
	case <-t.C:
	}
	rss, err := procRSS(c.pid())
	if err != nil {
		return 0, err
	}
	return mib(rss), nil
}

// mediamtxPhase records the first n cameras with MediaMTX for the warm-up
// and the window, then counts its files.
func (sw *sweep) mediamtxPhase(ctx context.Context, n, run int, fps float64) PhaseResult {
	res := PhaseResult{Recorder: RecorderMediaMTX, Run: run}
	o := sw.o
	dir := filepath.Join(sw.dir, fmt.Sprintf("mediamtx-%d-%d", n, run))
	defer os.RemoveAll(dir)
	sw.progress("%d cameras, mediamtx run %d: recording", n, run)
	c, err := startMediaMTX(o.MediaMTX, dir, o.Segment, sw.fleet.urls[:n])
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer c.stop(mediamtxStopGrace)
	start := time.Now()
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return c.exitError()
		case <-sw.fleet.done:
			return sw.fleet.exitError()
		case <-t.C:
			return nil
		}
	}
	if err := wait(o.Warmup); err != nil {
		res.Err = err.Error()
		return res
	}
	type sample struct {
		at             time.Time
		rec, cams, all time.Duration
	}
	take := func() sample {
		s := sample{at: time.Now()}
		s.rec, _ = procCPU(c.pid())
		s.cams, _ = procCPU(sw.fleet.pid())
		if m, err := machineCPU(); err == nil {
			s.all = m
		}
		return s
	}
	w0 := take()
	if err := wait(o.Duration); err != nil {
		res.Err = err.Error()
		return res
	}
	w1 := take()
	win := w1.at.Sub(w0.at)
	rss, err := procRSS(c.pid())
	if err != nil {
		res.Err = err.Error()
		return res
	}
	u := usage(w1.rec-w0.rec, win, n)
	res.CPUPercentPerCamera, res.RecordingCPUPercentPerCamera = u.CPUPercentPerCamera, u.CPUPercentPerCamera
	res.RSSEndMiB = mib(rss)
	res.RSSPerCameraMiB = (mib(rss) - sw.base) / float64(n)
	res.CamerasCPUPercentPerCamera = usage(w1.cams-w0.cams, win, n).CPUPercentPerCamera
	res.MachineCPUPercent = 100 * (w1.all - w0.all).Seconds() / win.Seconds()

	sw.progress("%d cameras, mediamtx run %d: closing, counting frames in its files", n, run)
	c.stop(mediamtxStopGrace)
	recordWindow := time.Since(start)
	files, lat, bad, err := mediamtxFiles(filepath.Join(dir, "rec"), o.Segment)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	cams := make([]string, n)
	for i := range cams {
		cams[i] = fmt.Sprintf("cam-%d", i+1)
	}
	res.Frames = fileFrameStats(cams, files, fps, recordWindow)
	res.Frames.FPS, res.Frames.Unreadable = fps, bad
	if res.Frames.CountedFrom == "" {
		res.Frames.CountedFrom = "files"
	}
	res.FullSegments = lat.n
	res.LatencyP50Ms, res.LatencyP99Ms = ms(lat.percentile(50)), ms(lat.percentile(99))
	return res
}

// mediamtxFiles counts the segments MediaMTX wrote under dir (one folder
// per camera, files named by their start), and the latency of those that
// reached the segment duration: from the segment's end to its file's last
// write. A segment ends where the next one starts: MediaMTX names a file
// by the arrival of its first frame (the start it gives the first file of
// a connection is an estimate, up to the key frame interval early, so
// start plus duration is not the end).
func mediamtxFiles(dir string, segment time.Duration) ([]storedFile, *latencies, int, error) {
	cams, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("mediamtx recordings: %w", err)
	}
	var files []storedFile
	lat := &latencies{}
	bad := 0
	for _, cd := range cams {
		if !cd.IsDir() {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(dir, cd.Name()))
		if err != nil {
			return nil, nil, 0, err
		}
		var fs []storedFile
		var mtimes []time.Time
		for _, e := range entries { // in order of name: of start
			name, ok := strings.CutSuffix(e.Name(), ".mp4")
			if !ok {
				continue
			}
			start, err := mediamtxStart(name)
			if err != nil {
				bad++
				continue
			}
			fi, err := e.Info()
			if err != nil {
				bad++
				continue
			}
			f, err := readStoredFile(filepath.Join(dir, cd.Name(), e.Name()), cd.Name(), start)
			if err != nil {
				bad++
				continue
			}
			fs = append(fs, f)
			mtimes = append(mtimes, fi.ModTime())
		}
		for i := 0; i+1 < len(fs); i++ {
			if fs[i].dur >= segment {
				lat.add(mtimes[i].Sub(fs[i+1].start))
			}
		}
		files = append(files, fs...)
	}
	return files, lat, bad, nil
}
