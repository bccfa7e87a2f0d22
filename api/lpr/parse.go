// Package lpr reads the licence plate reads cameras push: the Hikvision
// ISAPI ANPR alert (XML alone or multipart with its pictures) and a generic
// JSON form (docs/events.md, "Licence plate reads"). Its parsers never
// panic and allocate in proportion to the body, which the caller bounds.
package lpr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of a plate read. The caller bounds the body itself before it is
// parsed, so the parsers allocate in proportion to it.
const (
	// MaxPlateLen is the longest plate text, in characters.
	MaxPlateLen = 32
	// maxLPRParts is the most parts of a multipart plate read.
	maxLPRParts = 16
)

// ErrNoPlate means the body is a well-formed alert that is not a plate
// read (a camera's other alarms and heartbeats pushed to the same URL, or
// a read without a plate); it is acknowledged and ignored.
var ErrNoPlate = errors.New("not a plate read")

// Read is one plate read pushed by a camera.
type Read struct {
	// Plate is the plate text.
	Plate string
	// Confidence is the camera's confidence, 0 to 100 (0 when none).
	Confidence float64
	// At is when the camera read it; zero when it did not say.
	At time.Time
	// Picture is a JPEG of the read, nil when none.
	Picture []byte
}

// hikAlert is the part of a Hikvision ISAPI EventNotificationAlert that a
// plate read uses. Element names match in any namespace (the ISAPI ones
// differ between firmware versions).
type hikAlert struct {
	XMLName   xml.Name `xml:"EventNotificationAlert"`
	DateTime  string   `xml:"dateTime"`
	EventType string   `xml:"eventType"`
	ANPR      *struct {
		LicensePlate    string `xml:"licensePlate"`
		ConfidenceLevel string `xml:"confidenceLevel"`
	} `xml:"ANPR"`
}

// jsonRead is the generic JSON plate read (docs/events.md).
type jsonRead struct {
	Plate      string   `json:"plate"`
	Confidence *float64 `json:"confidence"`
	At         string   `json:"at"`
	AtMs       int64    `json:"at_ms"`
	Picture    string   `json:"picture"`
}

// Parse reads a plate read of media type contentType: a Hikvision
// EventNotificationAlert (XML alone or as the XML part of a multipart
// body with its pictures), or the generic JSON form (alone or as the JSON
// part of a multipart body with a JPEG part). Without a usable media type
// the first byte decides ('<' XML, '{' JSON). It never panics.
func Parse(contentType string, body []byte) (Read, error) {
	mt, params, _ := mime.ParseMediaType(contentType)
	if strings.HasPrefix(mt, "multipart/") {
		return parseMultipartRead(body, params["boundary"])
	}
	switch {
	case strings.HasSuffix(mt, "xml"):
		return parseHikvision(body)
	case strings.HasSuffix(mt, "json"):
		return parseJSONRead(body)
	}
	switch t := bytes.TrimLeft(body, " \t\r\n\ufeff"); {
	case len(t) > 0 && t[0] == '<':
		return parseHikvision(body)
	case len(t) > 0 && t[0] == '{':
		return parseJSONRead(body)
	}
	return Read{}, errors.New("the body is neither XML nor JSON")
}

// parseMultipartRead reads a multipart plate read: one XML or JSON part,
// and JPEG parts of which detectionPicture.jpg (the whole scene) is
// preferred, then the first.
func parseMultipartRead(body []byte, boundary string) (Read, error) {
	if boundary == "" {
		return Read{}, errors.New("multipart body without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var doc []byte
	var docKind byte
	var pictures [][]byte
	var preferred []byte
	for n := 0; ; n++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Read{}, errors.New("malformed multipart body")
		}
		if n == maxLPRParts {
			return Read{}, errors.New("more than " + strconv.Itoa(maxLPRParts) + " parts")
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return Read{}, errors.New("malformed multipart body")
		}
		name := strings.ToLower(p.FormName() + " " + p.FileName())
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch {
		case IsJPEG(data):
			pictures = append(pictures, data)
			if preferred == nil && strings.Contains(name, "detectionpicture") {
				preferred = data
			}
		case doc == nil && (strings.HasSuffix(ct, "xml") || strings.Contains(name, ".xml")):
			doc, docKind = data, 'x'
		case doc == nil && (strings.HasSuffix(ct, "json") || strings.Contains(name, ".json") || strings.TrimSpace(p.FormName()) == "event"):
			doc, docKind = data, 'j'
		}
	}
	var rd Read
	var err error
	switch docKind {
	case 'x':
		rd, err = parseHikvision(doc)
	case 'j':
		rd, err = parseJSONRead(doc)
	default:
		return Read{}, errors.New("no XML or JSON part")
	}
	if err != nil {
		return Read{}, err
	}
	switch {
	case preferred != nil:
		rd.Picture = preferred
	case len(pictures) > 0 && rd.Picture == nil:
		rd.Picture = pictures[0]
	}
	return rd, nil
}

// parseHikvision reads a Hikvision EventNotificationAlert. An alert whose
// eventType is not ANPR, or without a plate, is ErrNoPlate.
func parseHikvision(data []byte) (Read, error) {
	var a hikAlert
	if err := xml.Unmarshal(data, &a); err != nil {
		return Read{}, errors.New("not an EventNotificationAlert: malformed XML")
	}
	if !strings.EqualFold(strings.TrimSpace(a.EventType), "ANPR") || a.ANPR == nil {
		return Read{}, ErrNoPlate
	}
	rd := Read{Plate: a.ANPR.LicensePlate}
	if c := strings.TrimSpace(a.ANPR.ConfidenceLevel); c != "" {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil {
			return Read{}, errors.New("confidenceLevel must be a number")
		}
		rd.Confidence = v
	}
	if d := strings.TrimSpace(a.DateTime); d != "" {
		t, err := time.Parse(time.RFC3339Nano, d)
		if err != nil {
			// Some firmware omits the offset: local to the camera, unknown here.
			t, err = time.Parse("2006-01-02T15:04:05", d)
		}
		if err == nil {
			rd.At = t
		}
	}
	return checkRead(rd)
}

// parseJSONRead reads the generic JSON plate read.
func parseJSONRead(data []byte) (Read, error) {
	var j jsonRead
	if err := json.Unmarshal(data, &j); err != nil {
		return Read{}, errors.New("malformed JSON: " + err.Error())
	}
	rd := Read{Plate: j.Plate}
	if j.Confidence != nil {
		rd.Confidence = *j.Confidence
	}
	switch {
	case j.At != "":
		t, err := time.Parse(time.RFC3339Nano, j.At)
		if err != nil {
			return Read{}, errors.New("at must be an RFC 3339 time")
		}
		rd.At = t
	case j.AtMs > 0:
		rd.At = time.UnixMilli(j.AtMs)
	}
	if j.Picture != "" {
		pic, err := base64.StdEncoding.DecodeString(j.Picture)
		if err != nil || !IsJPEG(pic) {
			return Read{}, errors.New("picture must be a base64 JPEG")
		}
		rd.Picture = pic
	}
	if strings.TrimSpace(rd.Plate) == "" {
		return Read{}, errors.New("plate is required")
	}
	return checkRead(rd)
}

// checkRead trims and checks the plate and the confidence.
func checkRead(rd Read) (Read, error) {
	rd.Plate = strings.TrimSpace(rd.Plate)
	if rd.Plate == "" {
		return Read{}, ErrNoPlate
	}
	if !utf8.ValidString(rd.Plate) || utf8.RuneCountInString(rd.Plate) > MaxPlateLen ||
		strings.IndexFunc(rd.Plate, unicode.IsControl) >= 0 {
		return Read{}, errors.New("the plate must be 1 to " + strconv.Itoa(MaxPlateLen) + " printable characters")
	}
	if !(rd.Confidence >= 0 && rd.Confidence <= 100) {
		return Read{}, errors.New("the confidence must be 0 to 100")
	}
	return rd, nil
}

// IsJPEG reports whether data starts like a JPEG file (SOI and a marker).
func IsJPEG(data []byte) bool {
	return len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF
}
