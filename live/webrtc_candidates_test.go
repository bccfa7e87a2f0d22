package live

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
)

// hostInterface returns a non-loopback interface that is up with an IPv4
// address, and that address.
func hostInterface(t *testing.T) (string, net.IP) {
	t.Helper()
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				return ifc.Name, ipn.IP.To4()
			}
		}
	}
	t.Skip("no interface but loopback")
	return "", nil
}

// received counts the datagrams arriving on pc until the deadline.
func received(pc net.PacketConn, until time.Time) int {
	_ = pc.SetReadDeadline(until)
	n := 0
	buf := make([]byte, 1500)
	for {
		if _, _, err := pc.ReadFrom(buf); err != nil {
			return n
		}
		n++
	}
}

// TestWebRTCRemoteCandidatesFiltered: a node gathering on a host
// interface gets an offer naming 60 loopback candidates (and private and
// multicast ones) on one UDP port, and one candidate on its own network.
// It sends no STUN request to the loopback port in 5 s, and checks the
// candidate on its network.
func TestWebRTCRemoteCandidatesFiltered(t *testing.T) {
	t.Parallel()
	name, ip := hostInterface(t)
	n := newRTCNode(t, WebRTCConfig{Interfaces: []string{name}})
	n.playH264(t, "cam")
	probe, err := net.ListenPacket("udp4", "0.0.0.0:0") // every 127.x.y.z
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	allowed, err := net.ListenPacket("udp4", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer allowed.Close()

	_, offer := offerSDP(t, media.H264)
	var b strings.Builder
	for line := range strings.SplitSeq(offer, "\n") {
		if !strings.HasPrefix(line, "a=candidate:") && !strings.HasPrefix(line, "a=end-of-candidates") && line != "" {
			b.WriteString(line + "\n")
		}
	}
	port := probe.LocalAddr().(*net.UDPAddr).Port
	cand := func(i int, addr string, port int) {
		fmt.Fprintf(&b, "a=candidate:%d 1 udp %d %s %d typ host\r\n", 100+i, 2130706431-i, addr, port)
	}
	for i := range 60 {
		cand(i, fmt.Sprintf("127.0.0.%d", 1+i), port)
	}
	cand(60, "10.1.2.3", port)
	cand(61, "224.0.0.1", port)
	cand(62, "0.0.0.0", port)
	cand(63, ip.String(), allowed.LocalAddr().(*net.UDPAddr).Port)
	code, _, body := postOffer(t, n.whepURL("cam", time.Now().Add(time.Hour)), b.String())
	if code != http.StatusCreated {
		t.Fatalf("offer: %d %s", code, body)
	}
	if strings.Contains(body, " 127.0.0.1 ") {
		t.Errorf("answer lists loopback, not gathered on:\n%s", body)
	}
	until := time.Now().Add(5 * time.Second)
	got := make(chan int)
	go func() { got <- received(allowed, until) }()
	if k := received(probe, until); k != 0 {
		t.Errorf("%d datagrams sent to loopback candidates", k)
	}
	if k := <-got; k == 0 {
		t.Error("no STUN request sent to the candidate on the node's network")
	}
}

// TestCandidateRule checks the rule on addresses.
func TestCandidateRule(t *testing.T) {
	r := candidateRule{local: nil, hasPublic: true}
	for _, tc := range []struct {
		ip           string
		remote, own  bool
		allowPrivate bool
	}{
		{"203.0.113.9", true, true, false},
		{"127.0.0.1", false, false, false},
		{"127.0.0.1", false, false, true},
		{"10.1.2.3", false, false, false},
		{"10.1.2.3", true, false, true},
		{"169.254.1.1", false, false, true},
		{"fe80::1", false, false, true},
		{"224.0.0.1", false, false, true},
		{"0.0.0.0", false, false, true},
		{"::", false, false, true},
	} {
		r.allowPrivate = tc.allowPrivate
		ip := net.ParseIP(tc.ip)
		if got := r.remote(ip); got != tc.remote {
			t.Errorf("remote %s (private allowed %v) = %v, want %v", tc.ip, tc.allowPrivate, got, tc.remote)
		}
		if got := r.own(ip); got != tc.own {
			t.Errorf("own %s = %v, want %v", tc.ip, got, tc.own)
		}
	}
}
