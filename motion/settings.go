package motion

import "time"

// Settings tune the detection of one camera.
type Settings struct {
	// Sensitivity from 0 (least) to 1 (most): it lowers the trigger
	// threshold on frame sizes and the changed area needed to confirm.
	// Values outside 0..1 are clamped. The zero value means 0.5 only
	// through DefaultSettings.
	Sensitivity float64

	// MinDuration is the shortest motion that makes an event. It defaults
	// to 1 second.
	MinDuration time.Duration

	// MaxDuration is the longest event; longer motion is split. It
	// defaults to 60 seconds.
	MaxDuration time.Duration

	// Hold is how long motion may pause inside one event. It defaults to 2
	// seconds.
	Hold time.Duration
}

// DefaultSettings returns the default settings: sensitivity 0.5, events of
// 1 s to 60 s, pauses of up to 2 s inside one event.
func DefaultSettings() Settings {
	return Settings{Sensitivity: 0.5, MinDuration: time.Second, MaxDuration: time.Minute, Hold: 2 * time.Second}
}

func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.Sensitivity < 0 {
		s.Sensitivity = 0
	}
	if s.Sensitivity > 1 {
		s.Sensitivity = 1
	}
	if s.MinDuration <= 0 {
		s.MinDuration = d.MinDuration
	}
	if s.MaxDuration <= 0 {
		s.MaxDuration = d.MaxDuration
	}
	if s.Hold <= 0 {
		s.Hold = d.Hold
	}
	return s
}

// Thresholds derived from the sensitivity.
func (s Settings) triggerSigmas() float64  { return 6 - 4*s.Sensitivity }         // 6 .. 2
func (s Settings) triggerRatio() float64   { return 0.4 - 0.3*s.Sensitivity }     // 0.4 .. 0.1
func (s Settings) minChangedArea() float64 { return 0.006 - 0.004*s.Sensitivity } // 0.6 % .. 0.2 %
func (s Settings) minPixelChange() float64 { return 20 - 12*s.Sensitivity }       // 20 .. 8 levels
