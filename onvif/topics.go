package onvif

import "strings"

// Event types of the service interface (part 6) that cameras' topics map to.
const (
	TypeCameraAlert = 1  // tamper, scene change, image too dark/bright/blurry, video loss
	TypePanic       = 2  // digital input (panic button)
	TypePresence    = 4  // field, line, people, vehicle detection
	TypeMotion      = 5  // motion
	TypeAnomaly     = 13 // sound detection, loitering
)

// TopicRule maps a topic to an event type. A rule matches a notification
// when one segment of its prefix-free topic path equals Segment (or starts
// with it when Segment ends in "*"), compared without case; or, for rules
// with Data set, when the notification has a Data item of that name (the
// Tapo smart-event topics carry the kind of detection in the item name).
type TopicRule struct {
	Segment string
	Data    string
	Type    int
	// Instant marks topics that carry no state: each message is one
	// event (a line crossed).
	Instant bool
	// Label names the kind of event (docs/events.md).
	Label string
}

// TopicRules is the table, in the order rules are tried; docs/events.md
// lists it. Detection rules come before motion, so that
// "CellMotionDetector/People" is presence, not motion.
var TopicRules = []TopicRule{
	// Presence: field, line, people and vehicle detection.
	{Segment: "FieldDetector", Type: TypePresence, Label: "field"},
	{Segment: "ObjectsInside", Type: TypePresence, Label: "field"},
	{Segment: "Intrusion", Type: TypePresence, Label: "field"},
	{Segment: "IntrusionDetection", Type: TypePresence, Label: "field"},
	{Segment: "FenceGuard", Type: TypePresence, Label: "line"},
	{Segment: "Crossed", Type: TypePresence, Label: "line", Instant: true},
	{Segment: "LineDetector", Type: TypePresence, Label: "line"},
	{Segment: "LineCross", Type: TypePresence, Label: "line"},
	{Segment: "LineCrossing", Type: TypePresence, Label: "line"},
	{Segment: "People", Type: TypePresence, Label: "people"},
	{Segment: "PeopleDetect", Type: TypePresence, Label: "people"},
	{Segment: "PeopleDetector", Type: TypePresence, Label: "people"},
	{Segment: "HumanShapeDetect", Type: TypePresence, Label: "people"},
	{Segment: "Vehicle", Type: TypePresence, Label: "vehicle"},
	{Segment: "VehicleDetect", Type: TypePresence, Label: "vehicle"},
	// Anomaly: sound and loitering.
	{Segment: "DetectedSound", Type: TypeAnomaly, Label: "sound"},
	{Segment: "AudioDetection", Type: TypeAnomaly, Label: "sound"},
	{Segment: "TriggerLevel", Type: TypeAnomaly, Label: "sound"},
	{Segment: "Loitering*", Type: TypeAnomaly, Label: "loitering"},
	// Camera alert: tamper, scene change, image quality, video loss.
	{Segment: "Tamper*", Type: TypeCameraAlert, Label: "tamper"},
	{Segment: "GlobalSceneChange", Type: TypeCameraAlert, Label: "scene change"},
	{Segment: "ImageTooDark", Type: TypeCameraAlert, Label: "too dark"},
	{Segment: "ImageTooBright", Type: TypeCameraAlert, Label: "too bright"},
	{Segment: "ImageTooBlurry", Type: TypeCameraAlert, Label: "too blurry"},
	{Segment: "SignalLoss", Type: TypeCameraAlert, Label: "video loss"},
	{Segment: "VideoLoss", Type: TypeCameraAlert, Label: "video loss"},
	// Panic: digital inputs.
	{Segment: "DigitalInput", Type: TypePanic, Label: "digital input"},
	{Segment: "AlarmIn", Type: TypePanic, Label: "digital input"},
	// Motion.
	{Segment: "MotionAlarm", Type: TypeMotion, Label: "motion"},
	{Segment: "MotionDetection", Type: TypeMotion, Label: "motion"},
	{Segment: "Motion", Type: TypeMotion, Label: "motion"},
	{Segment: "MotionGuard", Type: TypeMotion, Label: "motion"},
	{Segment: "VMD*", Type: TypeMotion, Label: "motion"},
	// Data-item rules (Tapo smart events and CellMotionDetector variants).
	{Data: "IsPeople", Type: TypePresence, Label: "people"},
	{Data: "IsVehicle", Type: TypePresence, Label: "vehicle"},
	{Data: "IsLineCross", Type: TypePresence, Label: "line"},
	{Data: "IsIntrusion", Type: TypePresence, Label: "field"},
	{Data: "IsTamper", Type: TypeCameraAlert, Label: "tamper"},
	{Data: "IsMotion", Type: TypeMotion, Label: "motion"},
}

// Classify returns the rule matching n, or false when none does.
func Classify(n Notification) (TopicRule, bool) {
	segs := strings.Split(n.Path, "/")
	for _, r := range TopicRules {
		if r.Data != "" {
			for _, it := range n.Data {
				if strings.EqualFold(it.Name, r.Data) {
					return r, true
				}
			}
			continue
		}
		pat := strings.ToLower(r.Segment)
		prefix := strings.HasSuffix(pat, "*")
		pat = strings.TrimSuffix(pat, "*")
		for _, s := range segs {
			s = strings.ToLower(s)
			if s == pat || (prefix && strings.HasPrefix(s, pat)) {
				return r, true
			}
		}
	}
	return TopicRule{}, false
}

// State reads the on/off state a notification carries: the Data item the
// rule names, else the first Data item whose value is a boolean ("true",
// "false", "1", "0", "active", "inactive", "on", "off"). known is false for
// notifications that carry no state (a line crossing, which happens at one
// instant).
func State(r TopicRule, n Notification) (on, known bool) {
	if r.Instant {
		return false, false
	}
	if r.Data != "" {
		for _, it := range n.Data {
			if strings.EqualFold(it.Name, r.Data) {
				return parseBool(it.Value)
			}
		}
	}
	for _, it := range n.Data {
		if isIdentifier(it.Name) {
			continue
		}
		if on, ok := parseBool(it.Value); ok {
			return on, true
		}
	}
	return false, false
}

// isIdentifier tells items that name a thing (ObjectId, Index) from
// states: their "1" or "0" is not a state.
func isIdentifier(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, "id") || strings.HasSuffix(l, "token") || l == "index" || strings.HasSuffix(l, "count")
}

func parseBool(v string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "active", "on":
		return true, true
	case "false", "0", "inactive", "off":
		return false, true
	}
	return false, false
}
