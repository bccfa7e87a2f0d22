package testenv

import (
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// Packet is one packet of a media file as ffprobe lists it.
type Packet struct {
	Stream   int
	PTS      int64 // in the stream's time base
	Duration int64 // in the stream's time base
	Data     []byte
}

// FFprobePackets lists the packets of a media file, with their bytes.
func FFprobePackets(t testing.TB, path string) []Packet {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_packets", "-show_data", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var raw struct {
		Packets []struct {
			Stream   int    `json:"stream_index"`
			PTS      int64  `json:"pts"`
			Duration int64  `json:"duration"`
			Data     string `json:"data"`
		} `json:"packets"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	var pkts []Packet
	for _, p := range raw.Packets {
		pkts = append(pkts, Packet{Stream: p.Stream, PTS: p.PTS, Duration: p.Duration, Data: parseHexdump(t, p.Data)})
	}
	return pkts
}

// parseHexdump reads ffprobe's hex dump: lines of an offset, eight groups
// of two bytes and the text ("00000000: fb83 9d6c ...  ...l").
func parseHexdump(t testing.TB, s string) []byte {
	t.Helper()
	var b []byte
	for _, line := range strings.Split(s, "\n") {
		_, rest, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if len(rest) > 40 {
			rest = rest[:40]
		}
		h, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(rest), " ", ""))
		if err != nil {
			t.Fatalf("hex dump line %q: %v", line, err)
		}
		b = append(b, h...)
	}
	return b
}
