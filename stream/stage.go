package stream

import "github.com/vigia/vigia/media"

// Stage is a step between a camera's queue and its segmenter for one run
// of its source: it takes the run's units in order and passes on, through
// emit, the units to record in the order to record them (audio it
// transcodes, video it holds until the audio of its time is out). It owns
// the units it is given until it passes them on; those it does not pass
// on, it releases. Only the camera's pipeline goroutine calls it.
type Stage interface {
	Unit(u *media.Unit, emit func(*media.Unit))

	// Flush passes on every unit the stage holds: the run is over.
	Flush(emit func(*media.Unit))

	// Close frees the stage.
	Close()
}

// StageFactory builds, at the start of each run of a camera's source, the
// stage of that run from its tracks: it returns the tracks the segmenter
// and the consumers are told of (those the stage turns into others
// replaced) and the stage, nil when it has nothing to do.
type StageFactory func(camera string, tracks []*media.Track) ([]*media.Track, Stage)
