package onvif

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTopicTableDocumented checks that the topic table of docs/events.md
// lists TopicRules, in order, with their types and kinds.
func TestTopicTableDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, "<!-- topics:begin -->"), strings.Index(doc, "<!-- topics:end -->")
	if begin < 0 || end < begin {
		t.Fatal("docs/events.md lacks the topics markers")
	}
	var rows [][]string
	for _, line := range strings.Split(doc[begin:end], "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| segment") {
			continue
		}
		cells := strings.Split(line, "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells[1:])
	}
	if len(rows) != len(TopicRules) {
		t.Fatalf("docs list %d rules, TopicRules has %d", len(rows), len(TopicRules))
	}
	for i, r := range TopicRules {
		want := "`" + r.Segment + "`"
		if r.Data != "" {
			want = "data `" + r.Data + "`"
		}
		if r.Instant {
			want += " (no state)"
		}
		got := rows[i]
		if got[0] != want || got[1] != strconv.Itoa(r.Type) || got[2] != r.Label {
			t.Errorf("row %d: %q, want %s | %d | %s", i, got[:3], want, r.Type, r.Label)
		}
	}
}
