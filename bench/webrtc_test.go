package bench

import "testing"

func TestParseUDPRcvbufErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int64
	}{
		{"linux", "Ip: a b\nIp: 1 2\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\nUdp: 451675 1184 3724 458159 3723 0\nUdpLite: InDatagrams RcvbufErrors\nUdpLite: 0 9\n", 3723},
		{"no udp", "Ip: a\nIp: 1\n", -1},
		{"no field", "Udp: InDatagrams\nUdp: 5\n", -1},
		{"garbage", "Udp: RcvbufErrors\nUdp: x\n", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseUDPRcvbufErrors(tc.in); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
