package player

import (
	"errors"
	"net/url"
	"reflect"
	"testing"
	"time"
)

func TestParseQueryDefaults(t *testing.T) {
	q, err := ParseQuery(url.Values{"token": {"t"}, "player_digest": {"d"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Query{Footer: true, Controls: true, Window: 24 * time.Hour, Speed: 1}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got %+v, want %+v", q, want)
	}
	if _, ok := q.StartTime(); ok {
		t.Error("no ts is not live")
	}
}

func TestParseQuery(t *testing.T) {
	v := url.Values{
		"footer": {"0"}, "controls": {"false"}, "ts": {"1700000000"}, "delay": {"30"},
		"timeline_interval": {"10"}, "video_speed": {"0.5"},
		"hideFooter": {"true"}, "hideHeader": {"1"}, "fixFullScreen": {"TRUE"},
		"timeline_ranges_fill": {"#ABC"},
		"timeline_ranges":      {`[{"start_ts":1,"end_ts":2,"color":"#f00"},{"ini":3,"end":4}]`},
		"start_ts":             {"5"}, "end_ts": {"6"},
		"start_timestamps[]": {"7", "9"}, "end_timestamps[]": {"8", "10"},
	}
	q, err := ParseQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	want := Query{
		Footer: false, Controls: false, TS: 1700000000, Delay: 30, Window: 10 * time.Minute, Speed: 0.5,
		HideFooter: true, HideHeader: true, FixFullScreen: true, RangesFill: "#abc",
		Ranges: []Range{
			{StartMs: 1, EndMs: 2, Color: "#f00"}, {StartMs: 3, EndMs: 4, Color: "#abc"},
			{StartMs: 5, EndMs: 6, Color: "#abc"},
			{StartMs: 7, EndMs: 8, Color: "#abc"}, {StartMs: 9, EndMs: 10, Color: "#abc"},
		},
	}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got  %+v\nwant %+v", q, want)
	}
	if st, ok := q.StartTime(); !ok || st.Unix() != 1700000000-30 {
		t.Errorf("start %v %v, want ts - delay", st, ok)
	}
}

func TestParseQueryValues(t *testing.T) {
	tests := []struct {
		name  string
		v     url.Values
		check func(Query) bool
	}{
		{"interval 1 h", url.Values{"timeline_interval": {"1"}}, func(q Query) bool { return q.Window == time.Hour }},
		{"interval 24 h", url.Values{"timeline_interval": {"24"}}, func(q Query) bool { return q.Window == 24*time.Hour }},
		{"speed 16x", url.Values{"video_speed": {"16x"}}, func(q Query) bool { return q.Speed == 16 }},
		{"speed 4", url.Values{"video_speed": {"4"}}, func(q Query) bool { return q.Speed == 4 }},
		{"ts 0 is live", url.Values{"ts": {"0"}, "delay": {"10"}}, func(q Query) bool { _, ok := q.StartTime(); return !ok }},
		{"lists without brackets", url.Values{"start_timestamps": {"1"}, "end_timestamps": {"2"}},
			func(q Query) bool { return len(q.Ranges) == 1 && q.Ranges[0].Color == DefaultRangeColor }},
		{"empty values are defaults", url.Values{"footer": {""}, "ts": {""}, "video_speed": {""}, "timeline_ranges": {" "}},
			func(q Query) bool { return q.Footer && q.TS == 0 && q.Speed == 1 && len(q.Ranges) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(tt.v)
			if err != nil || !tt.check(q) {
				t.Errorf("got %+v, %v", q, err)
			}
		})
	}
}

func TestParseQueryErrorsNameEachField(t *testing.T) {
	v := url.Values{
		"footer": {"2"}, "controls": {"yes"}, "ts": {"-1"}, "delay": {"x"},
		"timeline_interval": {"5"}, "video_speed": {"3"}, "hideFooter": {"maybe"},
		"timeline_ranges_fill": {"red"}, "timeline_ranges": {`[{"ini":2,"end":1}]`},
		"start_ts": {"9"}, "end_ts": {"1"},
		"start_timestamps[]": {"1", "2"}, "end_timestamps[]": {"3"},
	}
	_, err := ParseQuery(v)
	qe, ok := AsQueryError(err)
	if !ok || !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("error %v is not a *QueryError wrapping ErrInvalidQuery", err)
	}
	var fields []string
	for _, f := range qe.Fields {
		fields = append(fields, f.Field)
		if f.Message == "" {
			t.Errorf("field %s has no message", f.Field)
		}
	}
	want := []string{"footer", "controls", "ts", "delay", "timeline_interval", "video_speed", "hideFooter",
		"timeline_ranges_fill", "timeline_ranges", "end_ts", "end_timestamps[]"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}

	_, err = ParseQuery(url.Values{"start_timestamps[]": {"5", "x"}, "end_timestamps[]": {"1", "2"}})
	qe, _ = AsQueryError(err)
	if qe == nil || len(qe.Fields) != 2 || qe.Fields[0].Field != "end_timestamps[0]" || qe.Fields[1].Field != "start_timestamps[1]" {
		t.Errorf("paired list errors: %v", err)
	}
}
