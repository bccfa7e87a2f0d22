package logging

import (
	"net/url"
	"strings"
	"testing"
)

var redactCases = []struct {
	name string
	in   string
	want string
}{
	{"no secrets", "rtsp://10.0.0.1:554/live", "rtsp://10.0.0.1:554/live"},
	{"user only", "rtsp://admin@10.0.0.1/live", "rtsp://admin@10.0.0.1/live"},
	{"password", "rtsp://admin:hunter2@10.0.0.1:554/live", "rtsp://admin:xxxxx@10.0.0.1:554/live"},
	{"escaped password", "rtsps://admin:p%40ss%2Fw@cam.example/h264", "rtsps://admin:xxxxx@cam.example/h264"},
	{"empty password", "rtmp://admin:@host/app", "rtmp://admin:xxxxx@host/app"},
	{"token query", "https://node/live/7/index.m3u8?token=abc123&x=1", "https://node/live/7/index.m3u8?token=xxxxx&x=1"},
	{"mixed case names", "https://h/v?Token=a&SIG=b&Player_Digest=c&keep=d", "https://h/v?Token=xxxxx&SIG=xxxxx&Player_Digest=xxxxx&keep=d"},
	{"s3 presigned", "https://s3/b/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AK%2F2024&X-Amz-Signature=ff00", "https://s3/b/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=xxxxx&X-Amz-Signature=xxxxx"},
	{"all listed names", "h://h/?key=1&signature=2&password=3&pass=4&secret=5&digest=6&hash=7", "h://h/?key=xxxxx&signature=xxxxx&password=xxxxx&pass=xxxxx&secret=xxxxx&digest=xxxxx&hash=xxxxx"},
	{"encoded name", "https://h/?%74oken=abc", "https://h/?%74oken=xxxxx"},
	{"name without value", "https://h/?token&a=b", "https://h/?token&a=b"},
	{"at sign in password", "rtsp://admin:p@ss@10.0.0.1/live", "rtsp://admin:xxxxx@10.0.0.1/live"},
	{"slash in password", "rtsp://admin:12/34@10.0.0.1/live", "rtsp://admin:xxxxx@10.0.0.1/live"},
	{"unparseable with query", "rtsp://admin:pw@[bad/x?token=t#frag", "rtsp://admin:xxxxx@[bad/x?token=xxxxx#frag"},
	{"opaque", "rtsp:admin:hunter2@host", "rtsp:xxxxx@host"},
	{"garbage", "%%%", "%%%"},
	{"empty", "", ""},
}

func TestRedactURL(t *testing.T) {
	for _, tt := range redactCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactURL(tt.in); got != tt.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzRedactURL checks that RedactURL never panics and never returns the
// password of an input that parses as a URL with a password.
func FuzzRedactURL(f *testing.F) {
	for _, tt := range redactCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := RedactURL(raw)
		u, err := url.Parse(raw)
		if err != nil || u.User == nil {
			return
		}
		pw, ok := u.User.Password()
		if !ok || pw == "" {
			return
		}
		// The password can legitimately appear elsewhere: in the rest of the
		// URL or inside the mask itself.
		stripped := *u
		stripped.User = url.User(u.User.Username())
		elsewhere := stripped.String() + " " + strings.Replace(raw, pw, "", 1) + " " + Mask
		for _, form := range []string{pw, url.UserPassword("", pw).String()[1:]} {
			if form == "" || strings.Contains(elsewhere, form) {
				continue
			}
			if strings.Contains(out, form) {
				t.Fatalf("RedactURL(%q) = %q leaks password %q", raw, out, form)
			}
		}
	})
}
