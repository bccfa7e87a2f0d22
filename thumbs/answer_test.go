package thumbs

import "testing"

func TestSnapshotKey(t *testing.T) {
	for _, tc := range []struct {
		name, reply, key string
		err              bool
	}{
		{"key", `{"key":"snap/cam/1.jpg","ts_ms":1,"width":2,"height":3}`, "snap/cam/1.jpg", false},
		{"error", `{"error":"no picture yet"}`, "", true},
		{"empty", `{}`, "", true},
		{"not JSON", `{`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := SnapshotKey([]byte(tc.reply))
			if key != tc.key || (err != nil) != tc.err {
				t.Fatalf("SnapshotKey = %q, %v; want %q, error %v", key, err, tc.key, tc.err)
			}
		})
	}
}
