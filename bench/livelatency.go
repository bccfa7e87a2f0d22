package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LiveStats is the live latency measured on one camera, by one viewer after
// the measured window: from the wall-clock end of an LL-HLS part (the
// arrival time of its last frame, which the recorder stamps) to the moment a
// blocking playlist request lists the part.
type LiveStats struct {
	// RecorderCPUPercent is the recorder's CPU while the viewer watched, in
	// % of one core; ViewerCPUPercent is that minus the window's, what the
	// viewer added (noisy: the difference of two measures).
	RecorderCPUPercent float64 `json:"recorder_cpu_percent"`
	ViewerCPUPercent   float64 `json:"viewer_cpu_percent"`
	// RSSDeltaMiB is how much the recorder's resident set grew meanwhile
	// (the camera's live muxer, mostly).
	RSSDeltaMiB float64 `json:"rss_delta_mib"`
	WindowS     float64 `json:"window_s"`

	Camera string  `json:"camera"`
	Parts  int     `json:"parts"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	Err    string  `json:"error,omitempty"`
}

// measureLive opens the live stream at master (it starts on demand) and
// then, for d, returns the latency of every part that appeared.
func measureLive(ctx context.Context, master string, d time.Duration) ([]time.Duration, error) {
	media, err := videoPlaylist(ctx, master)
	if err != nil {
		return nil, err
	}
	// Wait until the stream, started by the first request, lists parts.
	for deadline := time.Now().Add(20 * time.Second); ; {
		body, err := get(ctx, media)
		if err == nil && len(parseParts(body)) > 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("live media playlist lists no part: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	seen := map[string]bool{}
	var out []time.Duration
	first := true
	next := ""
	for ctx.Err() == nil {
		// Like an LL-HLS player, ask for the playlist that lists the next
		// part: the server answers once it exists (a blocking reload), so
		// the time of the answer is when a viewer could have it.
		now, body, err := fetchPlaylist(ctx, media+next)
		next = ""
		if err == nil {
			parts := parseParts(body)
			if msn, part, ok := nextPart(body); ok {
				next = fmt.Sprintf("%s_HLS_msn=%d&_HLS_part=%d", querySep(media), msn, part)
			}
			// Only the parts of the latest playlist are remembered, so a long
			// run keeps no old playlists alive.
			current := make(map[string]bool, len(parts))
			for _, p := range parts {
				current[p.uri] = true
				if seen[p.uri] {
					continue
				}
				if !first { // parts listed at the first poll appeared earlier
					out = append(out, now.Sub(p.end))
				}
			}
			seen = current
			first = false
		}
		if next != "" {
			continue
		}
		select { // no next part known (first read, error): poll
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return out, nil
}

// videoPlaylist returns the URL of the first media playlist listed in the
// multivariant playlist.
func videoPlaylist(ctx context.Context, master string) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, err := get(ctx, master)
		if err == nil {
			for _, line := range strings.Split(body, "\n") {
				line = strings.TrimSpace(line)
				if line != "" && !strings.HasPrefix(line, "#") {
					base, _ := url.Parse(master)
					ref, err := url.Parse(line)
					if err != nil {
						return "", err
					}
					return base.ResolveReference(ref).String(), nil
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("live playlist not available: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func get(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", u, res.Status)
	}
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return b.String(), sc.Err()
}

type part struct {
	uri string
	end time.Time
}

// fetchPlaylist reads a media playlist and returns when it was read.
func fetchPlaylist(ctx context.Context, media string) (time.Time, string, error) {
	body, err := get(ctx, media)
	return time.Now(), body, err
}

func querySep(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}

// nextPart returns the media sequence number and part index of the part
// that follows the last one a media playlist lists.
func nextPart(body string) (msn, part uint64, ok bool) {
	seen := false
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#EXT-X-MEDIA-SEQUENCE:"):
			n, err := strconv.ParseUint(strings.TrimPrefix(line, "#EXT-X-MEDIA-SEQUENCE:"), 10, 64)
			if err != nil {
				return 0, 0, false
			}
			msn, part, seen = n, 0, true
		case strings.HasPrefix(line, "#EXTINF:"):
			msn, part = msn+1, 0
		case strings.HasPrefix(line, "#EXT-X-PART:"):
			part++
		}
	}
	if !seen {
		return 0, 0, false
	}
	return msn, part, true
}

// parseParts walks a media playlist: a PROGRAM-DATE-TIME gives the start
// of the segment whose parts follow; each EXTINF moves to the next segment.
func parseParts(body string) []part {
	var out []part
	var segStart time.Time
	var offset time.Duration
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#EXT-X-PROGRAM-DATE-TIME:"):
			t, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(line, "#EXT-X-PROGRAM-DATE-TIME:"))
			if err == nil {
				segStart, offset = t, 0
			}
		case strings.HasPrefix(line, "#EXTINF:"):
			v := strings.TrimSuffix(strings.TrimPrefix(line, "#EXTINF:"), ",")
			if f, err := strconv.ParseFloat(strings.Split(v, ",")[0], 64); err == nil && !segStart.IsZero() {
				segStart = segStart.Add(time.Duration(f * float64(time.Second)))
			}
			offset = 0
		case strings.HasPrefix(line, "#EXT-X-PART:"):
			attrs := strings.TrimPrefix(line, "#EXT-X-PART:")
			var dur time.Duration
			var uri string
			for _, kv := range splitAttrs(attrs) {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "DURATION":
					if f, err := strconv.ParseFloat(v, 64); err == nil {
						dur = time.Duration(f * float64(time.Second))
					}
				case "URI":
					uri = strings.Clone(strings.Trim(v, `"`))
				}
			}
			offset += dur
			if !segStart.IsZero() && uri != "" {
				out = append(out, part{uri: uri, end: segStart.Add(offset)})
			}
		}
	}
	return out
}

// splitAttrs splits an attribute list on commas outside quotes.
func splitAttrs(s string) []string {
	var out []string
	inQ, start := false, 0
	for i, r := range s {
		switch {
		case r == '"':
			inQ = !inQ
		case r == ',' && !inQ:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func liveStats(camera string, samples []time.Duration, err error) *LiveStats {
	st := &LiveStats{Camera: camera, Parts: len(samples)}
	if err != nil {
		st.Err = err.Error()
	}
	if len(samples) == 0 {
		return st
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	st.P50Ms = ms(samples[len(samples)/2])
	st.P99Ms = ms(samples[(len(samples)*99)/100])
	st.MaxMs = ms(samples[len(samples)-1])
	return st
}
