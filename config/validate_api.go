package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// validateAPI checks the api section.
func (c *Config) validateAPI(v *validator) {
	a := c.API
	if a.BodyLimit <= 0 {
		v.add("api.body_limit", fmt.Errorf("%w %s (want more than 0)", ErrInvalidValue, a.BodyLimit))
	}
	v.positive("api.max_video_duration", a.MaxVideoDuration)
	v.positive("api.login_window", a.LoginWindow)
	v.positive("api.max_timeline_range", a.MaxTimelineRange)
	v.positive("api.max_playlist_range", a.MaxPlaylistRange)
	v.positive("api.listing_cache_ttl", a.ListingCacheTTL)
	if a.ViewerRate <= 0 || a.ViewerBurst < 1 {
		v.add("api.viewer_rate", fmt.Errorf("%w: rate %g and burst %d (want more than 0 and 1 or more)", ErrInvalidValue, a.ViewerRate, a.ViewerBurst))
	}
	if a.ListingCache < 0 {
		v.add("api.listing_cache", fmt.Errorf("%w %d (want 0 or more)", ErrInvalidValue, a.ListingCache))
	}
	if a.DigestGrace < 0 {
		v.add("api.digest_grace", fmt.Errorf("%w %s (want 0 or more)", ErrInvalidValue, a.DigestGrace))
	}
	if a.LoginAttempts < 1 {
		v.add("api.login_attempts", fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, a.LoginAttempts))
	}
	if _, err := time.LoadLocation(a.Timezone); err != nil || a.Timezone == "" {
		v.add("api.timezone", fmt.Errorf("%w %q (want an IANA time zone such as UTC or America/Sao_Paulo)", ErrInvalidValue, a.Timezone))
	}
	if a.RTMPURL != "" {
		v.url("api.rtmp_url", a.RTMPURL, "rtmp", "rtmps")
	}
	if _, err := ParseIntList(a.HistoryDays); err != nil {
		v.add("api.history_days", err)
	}
	mf := map[int]bool{}
	for i, m := range a.Manufacturers {
		key := fmt.Sprintf("api.manufacturers[%d]", i)
		if m.ID < 1 || mf[m.ID] {
			v.add(key+".id", fmt.Errorf("%w %d (want a unique id of 1 or more)", ErrInvalidValue, m.ID))
		}
		mf[m.ID] = true
		v.required(key+".name", m.Name)
	}
	models := map[int]bool{}
	for i, m := range a.CameraModels {
		key := fmt.Sprintf("api.camera_models[%d]", i)
		if m.ID < 1 || models[m.ID] {
			v.add(key+".id", fmt.Errorf("%w %d (want a unique id of 1 or more)", ErrInvalidValue, m.ID))
		}
		models[m.ID] = true
		v.required(key+".name", m.Name)
		if len(a.Manufacturers) > 0 && !mf[m.ManufacturerID] {
			v.add(key+".manufacturer_id", fmt.Errorf("%w %d (no such manufacturer)", ErrInvalidValue, m.ManufacturerID))
		}
		if !strings.HasPrefix(m.RTSPPath, "/") && m.RTSPPath != "onvif" {
			v.add(key+".rtsp_path", fmt.Errorf("%w %q (want a path starting with /, or onvif)", ErrInvalidValue, m.RTSPPath))
		}
	}
	res := map[int]bool{}
	for i, r := range a.Resolutions {
		key := fmt.Sprintf("api.resolutions[%d]", i)
		if r.ID < 1 || res[r.ID] {
			v.add(key+".id", fmt.Errorf("%w %d (want a unique id of 1 or more)", ErrInvalidValue, r.ID))
		}
		res[r.ID] = true
		v.required(key+".name", r.Name)
		if r.Width < 0 || r.Height < 0 {
			v.add(key, fmt.Errorf("%w: negative size", ErrInvalidValue))
		}
	}
}

// ParseIntList parses a comma-separated list of positive integers, such as
// api.history_days.
func ParseIntList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w %q (want comma-separated integers of 1 or more)", ErrInvalidValue, s)
		}
		out = append(out, n)
	}
	return out, nil
}
