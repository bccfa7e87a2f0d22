package api

import "time"

// Date layouts of the interface.
const (
	layoutDateTime = "2006-01-02 15:04:05"        // created_at, start_date
	layoutBR       = "02/01/2006 15:04"           // StartDateF
	layoutEvent    = "02/01/2006 15:04:05"        // event_at
	layoutPHP      = "2006-01-02 15:04:05.000000" // created_at.date objects
)

func (s *Server) fmtTime(t time.Time, layout string) string { return t.In(s.loc).Format(layout) }

// phpDate is the created_at / updated_at object of downloadable videos.
type phpDate struct {
	Date         string `json:"date"`
	TimezoneType int    `json:"timezone_type"`
	Timezone     string `json:"timezone"`
}

func (s *Server) phpDate(t time.Time) phpDate {
	return phpDate{Date: s.fmtTime(t, layoutPHP), TimezoneType: 3, Timezone: s.loc.String()}
}
