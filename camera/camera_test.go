package camera

import "testing"

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
