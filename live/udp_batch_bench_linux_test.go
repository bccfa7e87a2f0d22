package live

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkUDPFrameSend sends a P-frame of the 720p fixture clip as the
// node sends it to one viewer (12 SRTP packets of 1,228 bytes and one of
// 431) over loopback to a socket another goroutine drains: one sendto per
// packet as pion does alone ("sendto"), the frame batched by sendmmsg
// ("sendmmsg", a socket that refused segmentation) and by UDP
// segmentation offload ("gso"); "gso-to-gro" is gso to a receiving socket
// that takes the segments whole (UDP_GRO), which no browser's does: the
// difference is what loopback's delivery into a receiver costs the sender
// per packet. Run them in one invocation and compare: sender-cpu-ns/pkt
// is the CPU of the sending thread (on loopback its system calls also
// deliver into the receiving socket), process-cpu-ns/pkt adds the
// receiver's.
func BenchmarkUDPFrameSend(b *testing.B) {
	frame := sizes(12, 1228, 1, 431)
	for _, mode := range []string{"sendto", "sendmmsg", "gso", "gso-to-gro"} {
		b.Run(mode, func(b *testing.B) {
			_, c := newBatchSender(b)
			switch mode {
			case "sendmmsg":
				c.gso.Store(false)
			case "gso", "gso-to-gro":
				if !c.gso.Load() {
					b.Skip("the kernel does not take UDP_SEGMENT")
				}
			}
			peer := newUDPPeer(b)
			if mode == "gso-to-gro" {
				rc, err := peer.conn.SyscallConn()
				if err != nil {
					b.Fatal(err)
				}
				var serr error
				if err := rc.Control(func(fd uintptr) {
					serr = unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_GRO, 1)
				}); err != nil || serr != nil {
					b.Skip("no UDP_GRO:", err, serr)
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, 1<<16)
				for {
					if _, _, err := peer.conn.ReadFromUDPAddrPort(buf); err != nil {
						return
					}
				}
			}()
			pkts := make([][]byte, len(frame))
			for i, n := range frame {
				pkts[i] = mediaPacket(1, uint16(i), n)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			thread0, proc0 := cpuTime(unix.RUSAGE_THREAD), cpuTime(unix.RUSAGE_SELF)
			b.ResetTimer()
			for range b.N {
				if mode == "sendto" {
					for _, p := range pkts {
						if _, err := c.UDPConn.WriteToUDPAddrPort(p, peer.addr); err != nil {
							b.Fatal(err)
						}
					}
					continue
				}
				var r run
				for _, p := range pkts {
					buf, err := r.put(c, peer.addr, len(p))
					if err != nil {
						b.Fatal(err)
					}
					copy(buf, p)
				}
				if err := r.send(); err != nil {
					b.Fatal(err)
				}
				r.release()
			}
			b.StopTimer()
			thread, proc := cpuTime(unix.RUSAGE_THREAD)-thread0, cpuTime(unix.RUSAGE_SELF)-proc0
			n := float64(b.N * len(pkts))
			b.ReportMetric(float64(thread.Nanoseconds())/n, "sender-cpu-ns/pkt")
			b.ReportMetric(float64(proc.Nanoseconds())/n, "process-cpu-ns/pkt")
			peer.conn.Close()
			<-done
		})
	}
}

// cpuTime is the user and system CPU of who (RUSAGE_SELF, RUSAGE_THREAD).
func cpuTime(who int) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
