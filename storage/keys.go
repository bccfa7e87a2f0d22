package storage

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Key layout (paths use UTC):
//
//	rec/{camera}/{YYYY}/{MM}/{DD}/{HH}/{startMs}_{durMs}_{initSize}.mp4  recording segment
//	rec/{camera}/{YYYY}/{MM}/{DD}/{HH}/{startMs}_{durMs}.mp4     recording segment, older form
//	rec/{camera}/{YYYY}/{MM}/{DD}/{HH}/{startMs}_{durMs}_{cause}.gap  gap record
//	thumbs/{camera}/{YYYY}/{MM}/{DD}/{HH}/{unixSec}.jpg           minute thumbnail
//	thumbs-hourly/{camera}/{YYYY}/{MM}/{DD}/{unixSec}.jpg         hourly thumbnail
//	snap/{camera}/{unixMs}.jpg                                    snapshot
//	events/{camera}/{eventID}.jpg                                 event image
//	videos/{id}.mp4                                               downloadable video
//
// Every builder returns "" when an id is not valid (see ValidCameraID) or a
// time is outside the years 1970 to 9999; stores refuse the empty key, so
// no builder can produce a key outside its prefix.

// Top-level key prefixes.
const (
	PrefixRecordings   = "rec/"
	PrefixThumbs       = "thumbs/"
	PrefixHourlyThumbs = "thumbs-hourly/"
	PrefixSnapshots    = "snap/"
	PrefixEvents       = "events/"
	PrefixVideos       = "videos/"
)

const (
	segmentExt = ".mp4"
	gapExt     = ".gap"
	// maxCauseLen bounds the cause of a gap key.
	maxCauseLen = 32
)

// maxDurationMs is the longest segment duration a time.Duration holds.
const maxDurationMs = math.MaxInt64 / int64(time.Millisecond)

// SegmentKey returns the key of the recording segment of camera that starts
// at start, lasts dur (both kept to the millisecond) and whose init part
// (ftyp+moov) is initSize bytes: {startMs}_{durMs}_{initSize}.mp4, so that
// a listing gives what a playlist needs. With initSize 0 (not known) it
// returns the older form {startMs}_{durMs}.mp4, whose init size only the
// object's metadata holds: a segment's writer passes its init size, and so
// does whoever finds a segment by its writer's values.
func SegmentKey(camera string, start time.Time, dur time.Duration, initSize int64) string {
	if !ValidCameraID(camera) || !validTime(start) || dur < 0 || initSize < 0 {
		return ""
	}
	return SegmentPrefix(camera, start) + segmentName(start.UnixMilli(), dur.Milliseconds(), initSize)
}

// segmentName is the last segment of a segment key.
func segmentName(startMs, durMs, initSize int64) string {
	b := make([]byte, 0, 48)
	b = strconv.AppendInt(b, startMs, 10)
	b = append(b, '_')
	b = strconv.AppendInt(b, durMs, 10)
	if initSize > 0 {
		b = append(b, '_')
		b = strconv.AppendInt(b, initSize, 10)
	}
	return string(append(b, segmentExt...))
}

// SegmentKeyOfName returns the key of camera's recording segment whose
// last key segment (path.Base of the key) is name, in either form
// SegmentKey builds, or "" when name is not such a name.
func SegmentKeyOfName(camera, name string) string {
	if !ValidCameraID(camera) {
		return ""
	}
	stem, ok := strings.CutSuffix(name, segmentExt)
	if !ok {
		return ""
	}
	startMs, durMs, initSize, ok := parseSegmentStem(stem)
	if !ok || !validTime(time.UnixMilli(startMs)) {
		return ""
	}
	return SegmentKey(camera, time.UnixMilli(startMs), time.Duration(durMs)*time.Millisecond, initSize)
}

// parseSegmentStem splits {startMs}_{durMs} or {startMs}_{durMs}_{initSize}
// (canonical decimals, initSize above 0, durMs within a time.Duration).
func parseSegmentStem(stem string) (startMs, durMs, initSize int64, ok bool) {
	startStr, rest, ok := strings.Cut(stem, "_")
	if !ok {
		return 0, 0, 0, false
	}
	durStr, initStr, withInit := strings.Cut(rest, "_")
	if startMs, durMs, ok = parseSpan(startStr, durStr); !ok {
		return 0, 0, 0, false
	}
	if withInit {
		if initSize, ok = parseCanonical(initStr); !ok || initSize == 0 {
			return 0, 0, 0, false
		}
	}
	return startMs, durMs, initSize, true
}

// parseSpan parses the {startMs} and {durMs} of a recording key's name
// (canonical decimals, durMs within a time.Duration).
func parseSpan(startStr, durStr string) (startMs, durMs int64, ok bool) {
	if startMs, ok = parseCanonical(startStr); !ok {
		return 0, 0, false
	}
	if durMs, ok = parseCanonical(durStr); !ok || durMs > maxDurationMs {
		return 0, 0, false
	}
	return startMs, durMs, true
}

// SegmentPrefix returns the prefix of camera's recording segments that start
// in the UTC hour holding t, ending in '/'.
func SegmentPrefix(camera string, t time.Time) string {
	if !ValidCameraID(camera) || !validTime(t) {
		return ""
	}
	return PrefixRecordings + camera + "/" + hourPath(t) + "/"
}

// CameraSegmentsPrefix returns the prefix of all of camera's recording segments.
func CameraSegmentsPrefix(camera string) string {
	if !ValidCameraID(camera) {
		return ""
	}
	return PrefixRecordings + camera + "/"
}

// ParseSegmentKey splits a recording segment key made by SegmentKey, in
// either form: initSize is 0 for the older {startMs}_{durMs}.mp4. It
// refuses anything else, including keys whose date path does not match the
// start time. Refusals wrap ErrInvalidSegmentKey.
func ParseSegmentKey(key string) (camera string, startMs, durMs, initSize int64, err error) {
	e, err := ParseRecordingKey(key)
	if err == nil && e.Kind != KindSegment {
		err = fmt.Errorf("%w: %q: not an %s", ErrInvalidSegmentKey, key, segmentExt)
	}
	if err != nil {
		return "", 0, 0, 0, err
	}
	return e.Camera, e.StartMs, e.DurMs, e.InitSize, nil
}

// GapKey returns the key of camera's gap record that starts at start, lasts
// dur (0 while the gap is open) and has cause (1 to 32 of [a-z_]). The
// record lives in the hour folder of its start, beside the segments, so
// listings and retention treat both alike.
func GapKey(camera string, start time.Time, dur time.Duration, cause string) string {
	if !ValidCameraID(camera) || !validTime(start) || dur < 0 || !validCause(cause) {
		return ""
	}
	return PrefixRecordings + camera + "/" + hourPath(start) + "/" +
		strconv.FormatInt(start.UnixMilli(), 10) + "_" + strconv.FormatInt(dur.Milliseconds(), 10) + "_" + cause + gapExt
}

// ParseGapKey splits a gap record key made by GapKey. Refusals wrap
// ErrInvalidSegmentKey.
func ParseGapKey(key string) (camera string, startMs, durMs int64, cause string, err error) {
	e, err := ParseRecordingKey(key)
	if err == nil && e.Kind != KindGap {
		err = fmt.Errorf("%w: %q: not a %s", ErrInvalidSegmentKey, key, gapExt)
	}
	if err != nil {
		return "", 0, 0, "", err
	}
	return e.Camera, e.StartMs, e.DurMs, e.Cause, nil
}

// RecordingKind is the kind of an object under PrefixRecordings.
type RecordingKind int

// Kinds of recording objects.
const (
	// KindSegment is a recording segment (SegmentKey).
	KindSegment RecordingKind = iota + 1
	// KindGap is a gap record (GapKey).
	KindGap
)

// RecordingEntry is a parsed recording object key.
type RecordingEntry struct {
	// Kind is KindSegment or KindGap.
	Kind RecordingKind
	// Camera is the camera id.
	Camera string
	// StartMs is the start, Unix milliseconds; DurMs the duration in
	// milliseconds (0 for an open gap).
	StartMs, DurMs int64
	// InitSize is a segment's init part (ftyp+moov) in bytes, as its key
	// says; 0 for a gap record and for a segment key of the older form
	// {startMs}_{durMs}.mp4, whose init size only its metadata holds.
	InitSize int64
	// Cause is a gap record's cause, "" for a segment.
	Cause string
}

// ParseRecordingKey splits a key made by SegmentKey (either form) or
// GapKey. It refuses anything else, including keys whose date path does not
// match the start time. Refusals wrap ErrInvalidSegmentKey.
func ParseRecordingKey(key string) (RecordingEntry, error) {
	var e RecordingEntry
	parts := strings.Split(key, "/")
	if len(parts) != 7 || parts[0]+"/" != PrefixRecordings {
		return e, fmt.Errorf("%w: %q: not rec/{camera}/{YYYY}/{MM}/{DD}/{HH}/{name}", ErrInvalidSegmentKey, key)
	}
	e.Camera = parts[1]
	if !ValidCameraID(e.Camera) {
		return e, fmt.Errorf("%w: %q: bad camera id", ErrInvalidSegmentKey, key)
	}
	if stem, ok := strings.CutSuffix(parts[6], segmentExt); ok {
		e.Kind = KindSegment
		if e.StartMs, e.DurMs, e.InitSize, ok = parseSegmentStem(stem); !ok {
			return e, fmt.Errorf("%w: %q: name is not {startMs}_{durMs}_{initSize} or {startMs}_{durMs}", ErrInvalidSegmentKey, key)
		}
	} else if stem, ok = strings.CutSuffix(parts[6], gapExt); ok {
		e.Kind = KindGap
		f := strings.SplitN(stem, "_", 3)
		if len(f) != 3 || !validCause(f[2]) {
			return e, fmt.Errorf("%w: %q: name is not {startMs}_{durMs}_{cause}", ErrInvalidSegmentKey, key)
		}
		e.Cause = f[2]
		if e.StartMs, e.DurMs, ok = parseSpan(f[0], f[1]); !ok {
			return e, fmt.Errorf("%w: %q: bad start or duration", ErrInvalidSegmentKey, key)
		}
	} else {
		return e, fmt.Errorf("%w: %q: not an %s or %s", ErrInvalidSegmentKey, key, segmentExt, gapExt)
	}
	start := time.UnixMilli(e.StartMs)
	if !validTime(start) || strings.Join(parts[2:6], "/") != hourPath(start) {
		return e, fmt.Errorf("%w: %q: date path does not match start", ErrInvalidSegmentKey, key)
	}
	return e, nil
}

// validCause reports whether c is 1 to 32 characters of [a-z_] (a gap
// record's cause, a status.Cause).
func validCause(c string) bool {
	if c == "" || len(c) > maxCauseLen {
		return false
	}
	for i := 0; i < len(c); i++ {
		if (c[i] < 'a' || c[i] > 'z') && c[i] != '_' {
			return false
		}
	}
	return true
}

// MinuteThumbKey returns the key of camera's minute thumbnail taken at t.
func MinuteThumbKey(camera string, t time.Time) string {
	if !ValidCameraID(camera) || !validTime(t) {
		return ""
	}
	return PrefixThumbs + camera + "/" + hourPath(t) + "/" + strconv.FormatInt(t.Unix(), 10) + ".jpg"
}

// MinuteThumbPrefix returns the prefix of camera's minute thumbnails taken in
// the UTC hour holding t, ending in '/'.
func MinuteThumbPrefix(camera string, t time.Time) string {
	if !ValidCameraID(camera) || !validTime(t) {
		return ""
	}
	return PrefixThumbs + camera + "/" + hourPath(t) + "/"
}

// HourlyThumbKey returns the key of camera's hourly thumbnail taken at t.
func HourlyThumbKey(camera string, t time.Time) string {
	if !ValidCameraID(camera) || !validTime(t) {
		return ""
	}
	return PrefixHourlyThumbs + camera + "/" + dayPath(t) + "/" + strconv.FormatInt(t.Unix(), 10) + ".jpg"
}

// HourlyThumbPrefix returns the prefix of camera's hourly thumbnails taken in
// the UTC day holding t, ending in '/'.
func HourlyThumbPrefix(camera string, t time.Time) string {
	if !ValidCameraID(camera) || !validTime(t) {
		return ""
	}
	return PrefixHourlyThumbs + camera + "/" + dayPath(t) + "/"
}

// SnapshotKey returns the key of camera's snapshot taken at t.
func SnapshotKey(camera string, t time.Time) string {
	if !ValidCameraID(camera) || !validTime(t) {
		return ""
	}
	return PrefixSnapshots + camera + "/" + strconv.FormatInt(t.UnixMilli(), 10) + ".jpg"
}

// EventImageKey returns the key of the image of camera's event eventID.
// eventID follows the camera id rules.
func EventImageKey(camera, eventID string) string {
	if !ValidCameraID(camera) || !validID(eventID) {
		return ""
	}
	return PrefixEvents + camera + "/" + eventID + ".jpg"
}

// VideoKey returns the key of the downloadable video id.
// id follows the camera id rules.
func VideoKey(id string) string {
	if !validID(id) {
		return ""
	}
	return PrefixVideos + id + ".mp4"
}

func validTime(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1970 && y <= 9999
}

func hourPath(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%04d/%02d/%02d/%02d", t.Year(), int(t.Month()), t.Day(), t.Hour())
}

func dayPath(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%04d/%02d/%02d", t.Year(), int(t.Month()), t.Day())
}

// parseCanonical parses a non-negative decimal without sign or leading zeros.
func parseCanonical(s string) (int64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
