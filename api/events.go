package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/api/db"
)

// eventsPerPage is the page size of the event listing.
const eventsPerPage = 30

// maxEventDays bounds the period of one event listing.
const maxEventDays = 366

// eventTypes are the event types of spec part 6 and their descriptions.
var eventTypes = map[int]string{
	1:  "camera alert",
	2:  "panic",
	4:  "presence/absence detection",
	5:  "motion detection",
	7:  "license plate recognition (LPR)",
	13: "anomaly",
}

// eventRecord is an event of the listing (spec 2.7).
type eventRecord struct {
	ID                int64  `json:"id"`
	EventAt           string `json:"event_at"`
	EventType         int    `json:"event_type"`
	EventDescription  string `json:"event_description"`
	EventURL          string `json:"event_url"`
	CameraID          int64  `json:"camera_id"`
	CameraDescription string `json:"camera_description"`

	// Plate and PlateConfidence are the plate read of a licence plate
	// event (type 7), absent on other events (docs/events.md).
	Plate           string   `json:"plate,omitempty"`
	PlateConfidence *float64 `json:"plate_confidence,omitempty"`
}

// eventPage is the one object of the event listing's list.
type eventPage struct {
	Total       int           `json:"total"`
	PerPage     int           `json:"per_page"`
	CurrentPage int           `json:"current_page"`
	LastPage    int           `json:"last_page"`
	Data        []eventRecord `json:"data"`
}

// EventIn is an event to store, as produced on vigia.events.{camera}.{type}.
type EventIn struct {
	// ID is the producer's event id (the same event twice is stored once).
	ID string
	// Camera is the camera id.
	Camera string
	// Type is the event type of spec part 6.
	Type int
	// At is when it happened.
	At time.Time
	// ImageKey is the storage key of its image, "" when none.
	ImageKey string
	// Plate is the plate read of a licence plate event, "" when none;
	// Confidence the camera's confidence in it, 0 to 100.
	Plate      string
	Confidence float64
}

// StoreEvent stores an event of a camera registered through the API, once
// per event id. Events of other cameras (static, synthetic) are ignored.
func (s *Server) StoreEvent(ctx context.Context, e EventIn) error {
	id, err := strconv.ParseInt(e.Camera, 10, 64)
	if err != nil || id < 1 || camID(id) != e.Camera {
		return nil // not an API camera id ("01" is not camera 1)
	}
	c, err := s.cfg.DB.Camera(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.cfg.DB.AddEvent(ctx, db.Event{UID: e.ID, CameraID: c.ID, ClientID: c.ClientID, Type: e.Type, At: e.At, ImageKey: e.ImageKey}, s.now())
	if err == nil && e.Plate != "" {
		err = s.cfg.DB.AddPlate(ctx, e.ID, db.Plate{Plate: e.Plate, Confidence: e.Confidence})
	}
	return err
}

// listEvents is GET /api/v1/events: the operator sees every client's
// events, a user its client's.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	p, err := s.caller(r, in)
	if err != nil {
		return err
	}
	errs := fieldErrors{}
	f := newFields(in, errs)
	from := s.parseDay(f, "start_at")
	to := s.parseDay(f, "end_at")
	if !from.IsZero() && !to.IsZero() {
		if to.Before(from) {
			errs.add("end_at", "must not be before start_at")
		} else if to.Sub(from) > maxEventDays*24*time.Hour {
			errs.add("end_at", "the period may span at most "+strconv.Itoa(maxEventDays)+" days")
		}
	}
	var types []int
	if raw := f.str("event_types", false, 200); raw != "" {
		for _, part := range strings.Split(raw, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if _, known := eventTypes[n]; err != nil || !known {
				errs.add("event_types", "must be event type ids separated by commas (1, 2, 4, 5, 7, 13)")
				break
			}
			types = append(types, n)
		}
	}
	cameraID, _ := f.integer("camera", false)
	page, okPage := f.integer("page", false)
	if !okPage {
		page = 1
	}
	if page < 1 {
		errs.add("page", "must be 1 or more")
	}
	if err := errs.err(); err != nil {
		return err
	}
	if cameraID != 0 {
		if _, err := s.ownedCamera(r.Context(), p, cameraID); err != nil {
			return err
		}
	}
	evs, total, err := s.cfg.DB.Events(r.Context(), db.EventFilter{ClientID: p.clientID(), CameraID: cameraID, Types: types,
		From: from, To: to.AddDate(0, 0, 1), Limit: eventsPerPage, Offset: int(page-1) * eventsPerPage})
	if err != nil {
		return err
	}
	out := eventPage{Total: total, PerPage: eventsPerPage, CurrentPage: int(page),
		LastPage: max(1, (total+eventsPerPage-1)/eventsPerPage), Data: []eventRecord{}}
	plates, err := s.eventPlates(r.Context(), evs)
	if err != nil {
		return err
	}
	for _, e := range evs {
		rec := eventRecord{ID: e.ID, EventAt: s.fmtTime(e.At, layoutEvent), EventType: e.Type,
			EventDescription: eventTypes[e.Type], EventURL: s.signed(r.Context(), e.ImageKey), CameraID: e.CameraID,
			CameraDescription: e.CameraDescription}
		if p, ok := plates[e.UID]; ok {
			rec.Plate, rec.PlateConfidence = p.Plate, &p.Confidence
		}
		out.Data = append(out.Data, rec)
	}
	writeJSON(w, http.StatusOK, []eventPage{out})
	return nil
}

// parseDay reads a required Y-m-d date in the server's time zone.
func (s *Server) parseDay(f *fields, k string) time.Time {
	v := f.str(k, true, 10)
	if v == "" {
		return time.Time{}
	}
	t, err := time.ParseInLocation(time.DateOnly, v, s.loc)
	if err != nil {
		f.errs.add(k, "must be a date in the format Y-m-d (2024-01-31)")
		return time.Time{}
	}
	return t
}
