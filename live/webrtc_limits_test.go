package live

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vigia/vigia/media"
)

// postFrom sends sdp to a WHEP address from the loopback address src.
func postFrom(t *testing.T, src, target, sdp string) (int, string) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	defer c.CloseIdleConnections()
	res, err := c.Post(target, "application/sdp", strings.NewReader(sdp))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return res.StatusCode, string(body)
}

// TestWebRTCSessionBounds: sessions are bounded per live token, per
// address, per camera and per client; past a bound the offer is answered
// 429 with the bound named, counted, and offers under other keys are
// still answered.
func TestWebRTCSessionBounds(t *testing.T) {
	n := newRTCNode(t, WebRTCConfig{MaxSessionsPerToken: 2, MaxSessionsPerAddress: 4,
		MaxSessionsPerCamera: 6, MaxSessionsPerClient: 7,
		ClientOf: func(camera string) string { return map[string]string{"a": "1", "b": "1", "c": "2"}[camera] }})
	for _, cam := range []string{"a", "b", "c"} {
		n.playH264(t, cam)
	}
	_, offer := offerSDP(t, media.H264)
	exp := time.Now().Add(time.Hour)
	token := func(cam string, i int) string { return n.whepURL(cam, exp.Add(time.Duration(i)*time.Second)) }
	want := func(src, target string, code int, msg string) {
		t.Helper()
		got, body := postFrom(t, src, target, offer)
		if got != code || !strings.Contains(body, msg) {
			t.Errorf("offer from %s: %d %q, want %d %q", src, got, body, code, msg)
		}
	}
	// Per token: one URL opens two sessions, a third is refused.
	want("127.0.0.2", token("a", 0), http.StatusCreated, "")
	want("127.0.0.3", token("a", 0), http.StatusCreated, "")
	want("127.0.0.4", token("a", 0), http.StatusTooManyRequests, "for this live URL")
	// Per address: 127.0.0.5 opens four sessions with tokens of its own.
	for i := 1; i <= 4; i++ {
		want("127.0.0.5", token("a", i), http.StatusCreated, "")
	}
	want("127.0.0.5", token("c", 1), http.StatusTooManyRequests, "from this address")
	// Per camera: a has its six sessions.
	want("127.0.0.6", token("a", 10), http.StatusTooManyRequests, "of this camera")
	// Per client: b shares a's client, which holds seven with one on b.
	want("127.0.0.6", token("b", 1), http.StatusCreated, "")
	want("127.0.0.6", token("b", 2), http.StatusTooManyRequests, "of this client's cameras")
	// Another client's camera is still served.
	want("127.0.0.7", token("c", 2), http.StatusCreated, "")
	if got := n.w.Sessions(); got != 2+4+1+1 {
		t.Errorf("%d sessions, want 8", got)
	}
	for _, r := range []string{resultPerToken, resultPerAddress, resultPerCamera, resultPerClient} {
		if got := value(n.w.requests.WithLabelValues(r)); got != 1 {
			t.Errorf("%v offers counted as %s, want 1", got, r)
		}
	}
}

// craftOffer returns offer with its media section repeated to make
// sections sections, and extra candidates added to the first.
func craftOffer(offer string, sections, extra int) string {
	i := strings.Index(offer, "m=")
	head, media := offer[:i], offer[i:]
	var b strings.Builder
	b.WriteString(head)
	for s := range sections {
		b.WriteString(strings.Replace(media, "a=mid:0", fmt.Sprintf("a=mid:%d", s), 1))
		if s == 0 {
			for c := range extra {
				fmt.Fprintf(&b, "a=candidate:%d 1 udp 2130706431 127.0.0.1 9 typ host\r\n", 1000+c)
			}
		}
	}
	return b.String()
}

// TestWebRTCOfferShape: an offer with more media sections or candidates
// than allowed is answered 400 naming the bound, counted, and holds no
// session.
func TestWebRTCOfferShape(t *testing.T) {
	n := newRTCNode(t, WebRTCConfig{})
	n.playH264(t, "cam")
	_, offer := offerSDP(t, media.H264)
	target := n.whepURL("cam", time.Now().Add(time.Hour))
	for _, tc := range []struct {
		name   string
		sdp    string
		code   int
		msg    string
		result string
	}{
		{"40 media sections", craftOffer(offer, 40, 0), http.StatusBadRequest, "40 media sections, at most 8", resultSections},
		{"1000 candidates", craftOffer(offer, 1, 1000), http.StatusBadRequest, "candidates, at most 64", resultCandidates},
		{"eight sections", craftOffer(offer, 8, 0), http.StatusCreated, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postFrom(t, "127.0.0.1", target, tc.sdp)
			if code != tc.code || !strings.Contains(body, tc.msg) {
				t.Errorf("%d %q, want %d %q", code, body, tc.code, tc.msg)
			}
			if tc.result != "" && value(n.w.requests.WithLabelValues(tc.result)) != 1 {
				t.Errorf("not counted as %s", tc.result)
			}
		})
	}
	if n.w.Sessions() != 1 {
		t.Errorf("%d sessions, want the one within bounds", n.w.Sessions())
	}
}

// value returns a counter's value.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}
