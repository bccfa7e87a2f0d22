package config

import (
	"fmt"
	"strings"

	"github.com/vigia/vigia/camera"
)

func (c *Config) validateCameras(v *validator) {
	first := make(map[string]int, len(c.Cameras))
	for i, cam := range c.Cameras {
		key := func(name string) string { return fmt.Sprintf("cameras[%d].%s", i, name) }
		switch {
		case camera.ValidID(cam.ID) != nil:
			v.add(key("id"), fmt.Errorf("%w %q (want 1 to %d of A-Z a-z 0-9 _ -)", ErrInvalidValue, cam.ID, camera.MaxIDLen))
		case camera.IsAPIID(cam.ID):
			v.add(key("id"), fmt.Errorf("%w %q (ids of digits only are those of cameras created through the API; "+
				"a static camera's id needs a letter, _ or -, e.g. \"cam-%s\")", ErrInvalidValue, cam.ID, cam.ID))
		default:
			if j, dup := first[cam.ID]; dup {
				v.add(key("id"), fmt.Errorf("%w %q (duplicate of cameras[%d].id)", ErrInvalidValue, cam.ID, j))
			} else {
				first[cam.ID] = i
			}
		}
		if cam.URL == "" {
			v.add(key("url"), ErrRequired)
		} else if !strings.HasPrefix(strings.ToLower(cam.URL), "rtmp-push:") {
			v.url(key("url"), cam.URL, "rtsp", "rtsps", "rtmp", "rtmps", "p2p", "onvif")
		}
		if cam.Transport != "" {
			v.oneOf(key("transport"), cam.Transport, "tcp", "udp", "auto")
		}
		if cam.Sound != 0 && cam.Sound != 1 {
			v.add(key("sound"), fmt.Errorf("%w %d (want 0 or 1)", ErrInvalidValue, cam.Sound))
		}
		if cam.HistoryDays < 1 {
			v.add(key("history_days"), fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, cam.HistoryDays))
		}
	}
}
