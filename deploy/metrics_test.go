package deploy

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// recorderMetrics are the metrics a recorder node must export, with their
// types (docs/metrics.md).
var recorderMetrics = map[string]string{
	"vigia_cameras":                          "gauge",
	"vigia_received_bytes_total":             "counter",
	"vigia_received_frames_total":            "counter",
	"vigia_dropped_frames_total":             "counter",
	"vigia_segments_stored_total":            "counter",
	"vigia_segment_upload_failures_total":    "counter",
	"vigia_segments_dropped_total":           "counter",
	"vigia_segment_upload_latency_seconds":   "histogram",
	"vigia_spool_bytes":                      "gauge",
	"vigia_spool_oldest_segment_age_seconds": "gauge",
	"vigia_spool_backlog_bytes":              "gauge",
	"vigia_spool_quota_bytes":                "gauge",
	"vigia_node_capacity_cameras":            "gauge",
	"vigia_camera_reconnects_total":          "counter",
	"vigia_camera_connect_attempts_total":    "counter",
	"vigia_camera_probes_total":              "counter",
	"vigia_thumbnail_images_total":           "counter",
	"vigia_thumbnail_cpu_seconds_total":      "counter",
	"vigia_thumbnail_dropped_total":          "counter",
	"vigia_motion_events_total":              "counter",
	"vigia_motion_cpu_seconds_total":         "counter",
	"vigia_nats_publish_failures_total":      "counter",
	"vigia_http_requests_total":              "counter",
	"vigia_http_request_duration_seconds":    "histogram",
	"go_goroutines":                          "gauge",
	"process_resident_memory_bytes":          "gauge",
}

// apiMetrics are the metrics an API node must export.
var apiMetrics = map[string]string{
	"vigia_http_requests_total":           "counter",
	"vigia_http_request_duration_seconds": "histogram",
	"vigia_export_jobs_submitted_total":   "counter",
}

// scrape is one /metrics page: the type of each family and the value of
// each sample line ("name{labels}" → value).
type scrape struct {
	types   map[string]string
	samples map[string]float64
}

// scrapeMetrics reads url (a node's /metrics) in the Prometheus text format.
func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d", url, res.StatusCode)
	}
	return parseMetrics(t, res.Body)
}

func parseMetrics(t *testing.T, r io.Reader) scrape {
	t.Helper()
	s := scrape{types: map[string]string{}, samples: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(rest)
			if len(f) == 2 {
				s.types[f[0]] = f[1]
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("bad sample line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample value in %q", line)
		}
		s.samples[line[:i]] = v
	}
	return s
}

// check fails t for every problem of s.
func (s scrape) check(t *testing.T, node string, want map[string]string) {
	t.Helper()
	for _, p := range s.problems(want) {
		t.Errorf("%s: %s", node, p)
	}
}

// problems lists the wanted families missing, of another type or without
// a sample, and the families without the vigia_ prefix.
func (s scrape) problems(want map[string]string) []string {
	var out []string
	for name, typ := range want {
		got, ok := s.types[name]
		if !ok {
			out = append(out, "metric "+name+" missing")
			continue
		}
		if got != typ {
			out = append(out, "metric "+name+" is a "+got+", want "+typ)
		}
		found := false
		for k := range s.samples {
			if k == name || strings.HasPrefix(k, name+"{") || strings.HasPrefix(k, name+"_bucket{") || k == name+"_count" {
				found = true
				break
			}
		}
		if !found {
			out = append(out, "metric "+name+" has no sample")
		}
	}
	for name := range s.types {
		if !strings.HasPrefix(name, "vigia_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !strings.HasPrefix(name, "promhttp_") {
			out = append(out, "metric "+name+" lacks the vigia_ prefix")
		}
	}
	return out
}

// value returns a sample's value (0 when absent).
func (s scrape) value(sample string) float64 { return s.samples[sample] }

func TestParseMetrics(t *testing.T) {
	text := `# HELP vigia_cameras Cameras.
# TYPE vigia_cameras gauge
vigia_cameras{status="ONLINE"} 7
# TYPE vigia_segment_upload_latency_seconds histogram
vigia_segment_upload_latency_seconds_bucket{le="0.01"} 0
vigia_segment_upload_latency_seconds_sum 1.5
vigia_segment_upload_latency_seconds_count 3
`
	s := parseMetrics(t, strings.NewReader(text))
	if got := s.value(`vigia_cameras{status="ONLINE"}`); got != 7 {
		t.Errorf("ONLINE = %v, want 7", got)
	}
	if s.types["vigia_segment_upload_latency_seconds"] != "histogram" {
		t.Errorf("types = %v", s.types)
	}
	if s.value("vigia_segment_upload_latency_seconds_count") != 3 {
		t.Errorf("count = %v", s.samples)
	}
	if p := s.problems(map[string]string{"vigia_missing_total": "counter", "vigia_cameras": "counter"}); len(p) != 2 {
		t.Errorf("problems = %q, want a missing metric and a wrong type", p)
	}
	if p := s.problems(map[string]string{"vigia_cameras": "gauge", "vigia_segment_upload_latency_seconds": "histogram"}); len(p) != 0 {
		t.Errorf("problems = %q, want none", p)
	}
}
