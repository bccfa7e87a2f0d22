package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels string // the text between the braces, empty without labels
	value  float64
}

// benchMetricsToken is the http.metrics_token of the recorder a run starts.
const benchMetricsToken = "bench-metrics-token-0123456789abcdef"

// scrapeMetrics fetches and parses the node's /metrics.
func scrapeMetrics(ctx context.Context, url string) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+benchMetricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s answered %s", url, resp.Status)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics parses the Prometheus text exposition format, skipping
// comments and lines it does not understand.
func parseMetrics(r io.Reader) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if s, ok := parseSample(sc.Text()); ok {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return out, nil
}

// parseSample parses `name{labels} value [timestamp]`.
func parseSample(line string) (sample, bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return sample{}, false
	}
	var s sample
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return sample{}, false
		}
		s.name, s.labels, rest = line[:i], line[i+1:j], line[j+1:]
	} else {
		name, r, ok := strings.Cut(line, " ")
		if !ok {
			return sample{}, false
		}
		s.name, rest = name, r
	}
	f := strings.Fields(rest)
	if s.name == "" || len(f) == 0 {
		return sample{}, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return sample{}, false
	}
	s.value = v
	return s, true
}

// label returns the value of label key in s, empty when absent.
func (s sample) label(key string) string {
	for _, kv := range strings.Split(s.labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}
