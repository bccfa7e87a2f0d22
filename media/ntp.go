package media

import "time"

// ntpEpochOffset is the seconds from the NTP epoch (1 January 1900) to the
// Unix epoch (1 January 1970).
const ntpEpochOffset = 2208988800

// NTPTime returns t in the NTP timestamp format of RTCP sender reports
// (RFC 3550 section 4, RFC 5905): the seconds since 1900 in the high 32
// bits, the fraction of a second in the low 32. t is after 1970.
func NTPTime(t time.Time) uint64 {
	ns := t.UnixNano()
	secs := uint64(ns/1e9) + ntpEpochOffset
	frac := uint64(ns%1e9) << 32 / 1e9
	return secs<<32 | frac
}

// NTPToTime returns the time of an NTP timestamp, NTPTime's inverse to
// the nanosecond below.
func NTPToTime(v uint64) time.Time {
	frac := time.Duration((v & 0xffffffff) * uint64(time.Second) >> 32)
	return time.Unix(int64(v>>32)-ntpEpochOffset, 0).Add(frac)
}
