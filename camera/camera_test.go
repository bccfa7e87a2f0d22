package camera

import (
	"errors"
	"testing"
)

func TestIsAPIID(t *testing.T) {
	for id, want := range map[string]bool{
		"7": true, "0042": true, "1234567890": true,
		"": false, "cam-7": false, "7a": false, "-7": false, "+7": false, " 7": false, "synth-1": false, "７": false,
	} {
		if got := IsAPIID(id); got != want {
			t.Errorf("IsAPIID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, key, data string
		ok              bool
	}{
		{"record", "cam-1", `{"id":"cam-1","connection_type":1,"history_days":3}`, true},
		{"not json", "cam-1", `{"id":`, false},
		{"another id", "cam-2", `{"id":"cam-1","connection_type":1}`, false},
		{"bad id", "a.b", `{"id":"a.b","connection_type":1}`, false},
		{"rtsp without url", "cam-1", `{"id":"cam-1","connection_type":0}`, false},
		{"unknown connection type", "cam-1", `{"id":"cam-1","connection_type":9}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode(tc.key, []byte(tc.data))
			if tc.ok && (err != nil || c.ID != tc.key || c.HistoryDays != 3) {
				t.Fatalf("Decode = %+v, %v", c, err)
			}
			if !tc.ok && (!errors.Is(err, ErrInvalid) || c != (Config{})) {
				t.Fatalf("Decode = %+v, %v; want ErrInvalid", c, err)
			}
		})
	}
}
