package onvif

import (
	"fmt"
	"strings"
	"time"
)

// Item is a SimpleItem of a notification's Source, Key or Data.
type Item struct {
	Name, Value string
}

// Notification is one NotificationMessage of a PullMessages response (or
// of a Notify pushed by the camera).
type Notification struct {
	// Topic is the topic expression as sent, e.g.
	// "tns1:RuleEngine/CellMotionDetector/Motion".
	Topic string
	// Path is Topic without namespace prefixes on any segment, e.g.
	// "RuleEngine/CellMotionDetector/Motion".
	Path string
	// Time is the message's UtcTime (camera clock); zero when absent or
	// unreadable.
	Time time.Time
	// Operation is the PropertyOperation: "Initialized" (the current state,
	// replayed when a subscription starts), "Changed", "Deleted" or "".
	Operation string
	// Source and Data are the SimpleItems of the message's Source and Data.
	Source, Data []Item
}

// Property operations.
const (
	OpInitialized = "Initialized"
	OpChanged     = "Changed"
	OpDeleted     = "Deleted"
)

// maxItems bounds the SimpleItems kept per Source or Data.
const maxItems = 32

// ParseNotification reads a NotificationMessage element. Elements are
// matched by local name: prefixes (wsnt:, tt:, tev:, or none) vary between
// cameras and between messages of one camera.
func ParseNotification(nm *Node) (Notification, error) {
	topic := strings.TrimSpace(nm.Child("Topic").Value())
	if topic == "" {
		return Notification{}, fmt.Errorf("%w: notification without Topic", ErrMalformed)
	}
	n := Notification{Topic: topic, Path: topicPath(topic)}
	// wsnt:Message wraps tt:Message; some cameras put the items directly
	// under wsnt:Message.
	msg := nm.Child("Message")
	if inner := msg.Child("Message"); inner != nil {
		msg = inner
	}
	if msg == nil {
		return Notification{}, fmt.Errorf("%w: notification without Message", ErrMalformed)
	}
	n.Operation = msg.Attr("PropertyOperation")
	if t, err := parseUTCTime(msg.Attr("UtcTime")); err == nil {
		n.Time = t
	}
	n.Source = simpleItems(msg.Child("Source"))
	n.Data = simpleItems(msg.Child("Data"))
	return n, nil
}

// parseUTCTime reads an xs:dateTime; cameras send it with or without
// fractions and with Z or an offset, or without zone (read as UTC).
func parseUTCTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: UtcTime %q", ErrMalformed, s)
}

func simpleItems(n *Node) []Item {
	var out []Item
	for _, c := range n.All("SimpleItem") {
		if len(out) == maxItems {
			break
		}
		out = append(out, Item{Name: c.Attr("Name"), Value: c.Attr("Value")})
	}
	return out
}

// topicPath strips namespace prefixes from every segment of a concrete
// topic expression ("tns1:Device/tns1:Trigger/tnssamsung:DigitalInput" →
// "Device/Trigger/DigitalInput"). Only the first alternative of a
// "|"-separated expression is kept.
func topicPath(t string) string {
	t, _, _ = strings.Cut(t, "|")
	segs := strings.Split(strings.TrimSpace(t), "/")
	out := segs[:0]
	for _, s := range segs {
		s = strings.TrimSpace(localPart(s))
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}

// PullResult is a parsed PullMessagesResponse.
type PullResult struct {
	// CurrentTime and TerminationTime are the camera's clock and the
	// subscription's end (zero when absent).
	CurrentTime, TerminationTime time.Time
	// Messages are the notifications that parsed; Skipped counts those that
	// did not.
	Messages []Notification
	Skipped  int
}

// parsePullMessages reads a PullMessagesResponse (or a Notify) body.
func parsePullMessages(env *Envelope) (PullResult, error) {
	r := env.First()
	if r == nil || (r.Name != "PullMessagesResponse" && r.Name != "Notify") {
		return PullResult{}, fmt.Errorf("PullMessages: %w: no PullMessagesResponse", ErrMalformed)
	}
	var out PullResult
	out.CurrentTime, _ = parseUTCTime(r.Child("CurrentTime").Value())
	out.TerminationTime, _ = parseUTCTime(r.Child("TerminationTime").Value())
	for _, nm := range r.All("NotificationMessage") {
		n, err := ParseNotification(nm)
		if err != nil {
			out.Skipped++
			continue
		}
		out.Messages = append(out.Messages, n)
	}
	return out, nil
}

// ParsePullMessages parses a whole PullMessagesResponse (or Notify)
// envelope.
func ParsePullMessages(data []byte) (PullResult, error) {
	env, err := ParseEnvelope(data)
	if err != nil {
		return PullResult{}, err
	}
	return parsePullMessages(env)
}
