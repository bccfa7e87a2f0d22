package thumbs

// Status says whether s makes thumbnails, snapshots and motion detection's
// pictures, as a node's /readyz names it: "available", or "unavailable: "
// and why (UnavailableReason).
func (s *Service) Status() string {
	if s.available {
		return "available"
	}
	return "unavailable: " + UnavailableReason(s.cfg.Decoder)
}
