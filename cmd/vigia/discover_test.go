package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/vigia/vigia/onvif/onviftest"
)

// TestCamerasDiscover: `vigia cameras discover --range` finds a fake
// camera answering WS-Discovery on 127.0.0.1 when the configuration allows
// private networks, prints its address, model and device address, and
// refuses to probe loopback otherwise.
func TestCamerasDiscover(t *testing.T) {
	axis, _ := onviftest.VendorByName("axis")
	cam, err := onviftest.Start(onviftest.Options{Vendor: axis, User: "admin", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer cam.Close()
	resp, err := onviftest.ListenDiscovery("127.0.0.1:0", cam)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	port := strconv.Itoa(resp.Addr().Port)

	var out, errb bytes.Buffer
	if code := run([]string{"cameras", "discover", "--range", "127.0.0.1/32", "--port", port, "--wait", "2s",
		"--ingest.allow_private_networks=true"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ADDRESS") || !strings.HasPrefix(lines[2], "1 cameras answered") {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, f := range []string{"127.0.0.1", "P3245-LVE", cam.URL} {
		if !strings.Contains(lines[1], f) {
			t.Errorf("line %q lacks %q", lines[1], f)
		}
	}

	out.Reset()
	if code := run([]string{"cameras", "discover", "--json", "--range=127.0.0.1", "--port=" + port, "--wait=2s",
		"--ingest.allow_private_networks=true"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []discoverRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 1 || rows[0].Model != "P3245-LVE" || rows[0].XAddrs[0] != cam.URL {
		t.Fatalf("json %v: %s", err, out.String())
	}

	errb.Reset()
	if code := run([]string{"cameras", "discover", "--range", "127.0.0.1", "--port", port}, &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "allow_private_networks") {
		t.Fatalf("loopback probed without private networks allowed: exit %d: %s", code, errb.String())
	}
	if n := resp.Probes(); n != 2 {
		t.Fatalf("%d probes answered, want 2", n)
	}
}
