package camevents

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/vigia/vigia/logging"
	"github.com/vigia/vigia/onvif"
)

// StreamURI asks the device of c for the RTSP address of its first profile
// (stream "0" or "") or second (stream "1"), with c's credentials added
// and the host of the device address (cameras behind NAT or port
// forwarding give their inner address).
func StreamURI(ctx context.Context, c *onvif.Client, stream string) (string, error) {
	if err := c.Sync(ctx); err != nil {
		return "", err
	}
	if _, err := c.Discover(ctx); err != nil {
		return "", err
	}
	profiles, err := c.GetProfiles(ctx)
	if err != nil {
		return "", err
	}
	if len(profiles) == 0 {
		return "", errors.New("the camera has no media profile")
	}
	pr := profiles[0]
	if stream == "1" && len(profiles) > 1 {
		pr = profiles[1]
	}
	raw, err := c.GetStreamUri(ctx, pr.Token)
	if err != nil {
		return "", err
	}
	su, err := url.Parse(raw)
	if err != nil || (su.Scheme != "rtsp" && su.Scheme != "rtsps") {
		return "", fmt.Errorf("stream address %q is not an RTSP URL", logging.RedactURL(raw))
	}
	dev, err := url.Parse(c.DeviceURL)
	if err != nil {
		return "", err
	}
	if su.Port() == "" {
		su.Host = dev.Hostname()
	} else {
		su.Host = net.JoinHostPort(dev.Hostname(), su.Port())
	}
	if su.User == nil && c.User != "" {
		su.User = url.UserPassword(c.User, c.Password)
	}
	return su.String(), nil
}
