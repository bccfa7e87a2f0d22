package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestNewWriterFormats(t *testing.T) {
	iso8601 := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}`)
	tests := []struct {
		name   string
		format string
		check  func(t *testing.T, line string)
	}{
		{"empty is json", "", func(t *testing.T, line string) { checkJSON(t, line, iso8601) }},
		{"json", "json", func(t *testing.T, line string) { checkJSON(t, line, iso8601) }},
		{"console", "console", func(t *testing.T, line string) {
			if !iso8601.MatchString(line) {
				t.Errorf("console line does not start with an ISO8601 time: %q", line)
			}
			if strings.Contains(line, "\x1b[") {
				t.Errorf("console line has colour escapes: %q", line)
			}
			for _, want := range []string{"INFO", "hello", `"camera": "7"`} {
				if !strings.Contains(line, want) {
					t.Errorf("console line %q lacks %q", line, want)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := NewWriter(&buf, "info", tt.format)
			if err != nil {
				t.Fatalf("NewWriter: %v", err)
			}
			log.Info("hello", zap.String("camera", "7"))
			if err := log.Sync(); err != nil {
				t.Fatalf("Sync: %v", err)
			}
			tt.check(t, strings.TrimSpace(buf.String()))
		})
	}
}

func checkJSON(t *testing.T, line string, iso8601 *regexp.Regexp) {
	t.Helper()
	var entry map[string]any
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		t.Fatalf("not JSON: %q: %v", line, err)
	}
	if entry["level"] != "info" || entry["msg"] != "hello" || entry["camera"] != "7" {
		t.Errorf("unexpected entry %v", entry)
	}
	ts, _ := entry["ts"].(string)
	if !iso8601.MatchString(ts) {
		t.Errorf("ts %q is not ISO8601", ts)
	}
}

func TestNewWriterLevel(t *testing.T) {
	tests := []struct {
		name      string
		level     string
		wantDebug bool
		wantInfo  bool
	}{
		{"debug", "debug", true, true},
		{"info", "info", false, true},
		{"empty is info", "", false, true},
		{"upper case", "WARN", false, false},
		{"error", "error", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := NewWriter(&buf, tt.level, "json")
			if err != nil {
				t.Fatalf("NewWriter: %v", err)
			}
			log.Debug("debug-entry")
			log.Info("info-entry")
			out := buf.String()
			if got := strings.Contains(out, "debug-entry"); got != tt.wantDebug {
				t.Errorf("debug logged = %v, want %v", got, tt.wantDebug)
			}
			if got := strings.Contains(out, "info-entry"); got != tt.wantInfo {
				t.Errorf("info logged = %v, want %v", got, tt.wantInfo)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		level   string
		format  string
		wantErr error
		wantMsg string
	}{
		{"bad level", "loud", "json", ErrInvalidLevel, `"loud"`},
		{"numeric level", "3", "json", ErrInvalidLevel, `"3"`},
		{"bad format", "info", "xml", ErrInvalidFormat, `"xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.level, tt.format)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err %q does not name %s", err, tt.wantMsg)
			}
		})
	}
}
