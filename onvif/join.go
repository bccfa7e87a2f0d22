package onvif

import (
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Event is a camera event made of a start and an end on one source.
type Event struct {
	// Type is the service's event type, Label the kind (TopicRules).
	Type  int
	Label string
	// Topic is the notification's prefix-free topic path; Source its
	// Source items as "Name=Value" joined by ",".
	Topic, Source string
	// Start and End are local times (camera times corrected by the clock
	// offset); End equals Start for instantaneous events (line crossing).
	Start, End time.Time
}

// Duration is End minus Start.
func (e Event) Duration() time.Duration { return e.End.Sub(e.Start) }

// ID is a stable identifier of the event on camera: "o{startMs}-{FNV-64a of
// camera, topic and source}". The same event seen again (a node restarted
// and the camera replaying the state) gets the same id.
func (e Event) ID(camera string) string {
	h := fnv.New64a()
	h.Write([]byte(camera + "\x00" + e.Topic + "\x00" + e.Source))
	return "o" + strconv.FormatInt(e.Start.UnixMilli(), 10) + "-" + strconv.FormatUint(h.Sum64(), 16)
}

// DefaultMaxDuration is the longest event a Joiner makes when MaxDuration
// is zero: a state on for longer ends an event and starts the next.
const DefaultMaxDuration = 5 * time.Minute

// maxActive bounds the sources a Joiner tracks at once.
const maxActive = 256

// Joiner joins the notifications of one camera into Events: a state that
// turns on starts an event on its source (topic plus Source items), and
// the same state turning off ends it. Initialized messages (the state the
// camera replays when a subscription starts) start no new event: a true
// one is adopted as already active (so that its end still makes the event
// after a restart), a false one ends an event that was active. A Joiner is
// not safe for concurrent use.
type Joiner struct {
	// MaxDuration is the longest event (DefaultMaxDuration when zero).
	MaxDuration time.Duration
	active      map[string]*activeEvent
}

// activeEvent is an event in progress; replayed when it was adopted from
// an Initialized message (such states are not cut by MaxDuration: a
// digital input wired normally-on would otherwise make an event every
// MaxDuration).
type activeEvent struct {
	Event
	replayed bool
}

// SourceKey is the Source of an Event made from items: "Name=Value" pairs,
// sorted, joined by ",".
func SourceKey(items []Item) string {
	parts := make([]string, 0, len(items))
	for _, it := range items {
		parts = append(parts, it.Name+"="+it.Value)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Add feeds one notification seen at t (local time; use the message's
// time corrected by the clock offset) and returns the events it ends.
func (j *Joiner) Add(n Notification, t time.Time) []Event {
	rule, ok := Classify(n)
	if !ok {
		return nil
	}
	if j.active == nil {
		j.active = make(map[string]*activeEvent)
	}
	src := SourceKey(n.Source)
	key := n.Path + "\x00" + src
	on, known := State(rule, n)
	if n.Operation == OpDeleted {
		on, known = false, true
	}
	if !known {
		if n.Operation == OpInitialized {
			return nil
		}
		return []Event{{Type: rule.Type, Label: rule.Label, Topic: n.Path, Source: src, Start: t, End: t}}
	}
	cur := j.active[key]
	switch {
	case on && cur == nil:
		if len(j.active) >= maxActive {
			return nil
		}
		j.active[key] = &activeEvent{Event: Event{Type: rule.Type, Label: rule.Label, Topic: n.Path, Source: src, Start: t}, replayed: n.Operation == OpInitialized}
	case !on && cur != nil:
		delete(j.active, key)
		e := cur.Event
		e.End = t
		if e.End.Before(e.Start) {
			e.End = e.Start
		}
		return []Event{e}
	}
	return nil
}

// Expire ends the events active for longer than MaxDuration at now; each
// goes on as a new event starting at now. States
// adopted from Initialized messages are not cut.
func (j *Joiner) Expire(now time.Time) []Event {
	max := j.MaxDuration
	if max <= 0 {
		max = DefaultMaxDuration
	}
	var out []Event
	for _, cur := range j.active {
		if !cur.replayed && now.Sub(cur.Start) >= max {
			e := cur.Event
			e.End = now
			out = append(out, e)
			cur.Start = now
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Topic+out[a].Source < out[b].Topic+out[b].Source })
	return out
}

// Active is the number of events in progress.
func (j *Joiner) Active() int { return len(j.active) }
