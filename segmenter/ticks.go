package segmenter

import "time"

// toTicks converts d to ticks of a clock of the given rate without overflow
// for any duration a recording can reach.
func toTicks(d time.Duration, rate int64) int64 {
	sec := int64(d / time.Second)
	rem := int64(d % time.Second)
	return sec*rate + rem*rate/int64(time.Second)
}

// fromTicks converts ticks of a clock of the given rate to a duration.
func fromTicks(t int64, rate int64) time.Duration {
	sec := t / rate
	rem := t % rate
	return time.Duration(sec)*time.Second + time.Duration(rem*int64(time.Second)/rate)
}
