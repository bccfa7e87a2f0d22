package rtmp

import (
	"strings"
	"testing"
)

func TestPublicPushURL(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    PublicPush
		want string
	}{
		{"public host", PublicPush{Host: "push.example.com", PublicURL: "https://vigia.example.com", Addr: ":1936"}, "rtmp://push.example.com:1936/live/cam"},
		{"host of the public URL", PublicPush{PublicURL: "https://vigia.example.com:8443/x", Addr: "0.0.0.0:1937"}, "rtmp://vigia.example.com:1937/live/cam"},
		{"port 0", PublicPush{Host: "h", Addr: "127.0.0.1:0"}, "rtmp://h:1935/live/cam"},
		{"no port", PublicPush{Host: "h", Addr: ""}, "rtmp://h:1935/live/cam"},
		{"IPv6 host", PublicPush{PublicURL: "http://[::1]:8080", Addr: "[::]:1935"}, "rtmp://[::1]:1935/live/cam"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.URL(testSecret, "cam")
			want := tc.want + "?key=" + PushKey(testSecret, "cam")
			if got != want || !strings.Contains(got, "key=") {
				t.Fatalf("URL = %q, want %q", got, want)
			}
		})
	}
}
