package onviftest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/testenv"
)

// need skips the test when a tool is missing, unless CI=true, where a
// missing tool is a failure.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (make deps installs it)", what)
	}
	t.Skipf("%s is missing (make deps installs it)", what)
}

// npmVendors are the vendors the npm client can read: all but Reolink,
// whose fake (strict WS-Addressing) refuses its PullMessages, which carry
// no Action and To headers.
var npmVendors = []string{"hikvision", "axis", "dahua", "bosch", "hanwha", "tapo"}

var motionTopic = map[string]string{
	"hikvision": "tns1:RuleEngine/CellMotionDetector/Motion",
	"dahua":     "tns1:VideoSource/MotionAlarm",
	"hanwha":    "tns1:VideoAnalytics/tnssamsung:MotionDetection",
	"tapo":      "tns1:RuleEngine/CellMotionDetector/Motion",
	"axis":      "tns1:VideoSource/MotionAlarm",
	"bosch":     "tns1:VideoAnalytics/MotionAlarm",
	"reolink":   "tns1:RuleEngine/CellMotionDetector/Motion",
}

// TestNPMClient reads the fake camera with the npm onvif package (0.8.x):
// device information, profiles, stream address and a motion event.
func TestNPMClient(t *testing.T) {
	node, err := exec.LookPath("node")
	need(t, err == nil, "node")
	script, _ := filepath.Abs(filepath.Join("js", "interop.js"))
	_, err = os.Stat(filepath.Join("js", "node_modules", "onvif", "package.json"))
	need(t, err == nil, "the npm onvif package (onvif/onviftest/js/node_modules)")
	for _, name := range npmVendors {
		t.Run(name, func(t *testing.T) {
			v, _ := onviftest.VendorByName(name)
			cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: "admin", Password: "Secret#1", ClockOffset: 47 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer cam.Close()
			host, port, _ := strings.Cut(strings.TrimPrefix(cam.Base, "http://"), ":")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, host, port, "admin", "Secret#1", motionTopic[name])
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			testenv.WaitFor(t, 20*time.Second, "the npm client's subscription", func() bool {
				return cam.Subscriptions() >= 1 && cam.Calls("PullMessages") >= 1
			})
			if err := cam.Set("motion", true); err != nil {
				t.Fatal(err)
			}
			if err := <-waited; err != nil {
				t.Fatalf("npm client: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			var info struct {
				Info struct {
					Manufacturer, Model, SerialNumber string
				}
			}
			var profiles struct{ Profiles []struct{ Token any } }
			var stream struct{ Stream string }
			var events []npmEvent
			sc := bufio.NewScanner(&stdout)
			for sc.Scan() {
				line := sc.Bytes()
				switch {
				case bytes.HasPrefix(line, []byte(`{"info"`)):
					_ = json.Unmarshal(line, &info)
				case bytes.HasPrefix(line, []byte(`{"profiles"`)):
					_ = json.Unmarshal(line, &profiles)
				case bytes.HasPrefix(line, []byte(`{"stream"`)):
					_ = json.Unmarshal(line, &stream)
				case bytes.HasPrefix(line, []byte(`{"event"`)):
					events = append(events, npmEvent{})
					_ = json.Unmarshal(line, &events[len(events)-1])
				}
			}
			if info.Info.Manufacturer == "" || info.Info.SerialNumber == "" {
				t.Errorf("device information %+v", info)
			}
			if len(profiles.Profiles) < 2 || profiles.Profiles[0].Token == nil {
				t.Errorf("profiles %+v", profiles)
			}
			if !strings.HasPrefix(stream.Stream, "rtsp://"+host) {
				t.Errorf("stream uri %q", stream.Stream)
			}
			initialized, changed := 0, 0
			for _, e := range events {
				switch e.Event.Op {
				case "Initialized":
					initialized++
				case "Changed":
					changed++
					if e.Event.Topic != motionTopic[name] || len(e.Event.Data) == 0 || !isOn(e.Event.Data[len(e.Event.Data)-1].Value) {
						t.Errorf("changed event %+v", e.Event)
					}
				}
			}
			if initialized != len(v.Kinds) || changed != 1 {
				t.Errorf("%d initialized and %d changed events, want %d and 1: %s", initialized, changed, len(v.Kinds), stdout.String())
			}
		})
	}
}

// npmEvent is an {"event":…} line of interop.js.
type npmEvent struct {
	Event struct {
		Topic, Op string
		// Data values are what the client made of them (it turns
		// "true" into a boolean and numbers into numbers).
		Data []struct {
			Name  string
			Value any
		}
	}
}

func isOn(v any) bool {
	s := fmt.Sprint(v)
	return s == "true" || s == "1"
}
