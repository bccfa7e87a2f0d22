package onvif

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DeviceInformation is the answer of GetDeviceInformation.
type DeviceInformation struct {
	Manufacturer, Model, FirmwareVersion, SerialNumber, HardwareID string
}

// Services are the addresses of the services the client uses.
type Services struct {
	// Media and Events are the service addresses; empty when the device
	// advertises none (then the device address is used, as single-endpoint
	// cameras such as Tapo's expect).
	Media, Events string
	// Media2 is the address of the Media2 service (ver20); the client
	// uses it for profiles and stream addresses when the device
	// advertises no Media service.
	Media2 string
}

// GetSystemDateAndTime asks the camera its UTC clock, without
// authentication (the ONVIF core specification allows it unauthenticated,
// so that the clock can be read before a UsernameToken is built). A camera
// that refuses is asked again with authentication.
func (c *Client) GetSystemDateAndTime(ctx context.Context) (time.Time, error) {
	body := `<GetSystemDateAndTime xmlns="` + nsDevice + `"/>`
	env, err := c.call(ctx, c.DeviceURL, nsDevice+"/GetSystemDateAndTime", body, false)
	if err != nil && errors.Is(err, ErrUnauthorized) {
		env, err = c.call(ctx, c.DeviceURL, nsDevice+"/GetSystemDateAndTime", body, true)
	}
	if err != nil {
		return time.Time{}, err
	}
	return parseSystemDateAndTime(env)
}

// parseSystemDateAndTime reads UTCDateTime, or LocalDateTime (read as UTC)
// from cameras that give only that.
func parseSystemDateAndTime(env *Envelope) (time.Time, error) {
	sdt := env.Body.Find("SystemDateAndTime")
	dt := sdt.Child("UTCDateTime")
	if dt == nil {
		dt = sdt.Child("LocalDateTime")
	}
	if dt == nil {
		return time.Time{}, fmt.Errorf("GetSystemDateAndTime: %w: no UTCDateTime", ErrMalformed)
	}
	num := func(n *Node, name string) int {
		v, err := strconv.Atoi(n.Child(name).Value())
		if err != nil {
			return -1
		}
		return v
	}
	d, t := dt.Child("Date"), dt.Child("Time")
	y, mo, day := num(d, "Year"), num(d, "Month"), num(d, "Day")
	h, mi, s := num(t, "Hour"), num(t, "Minute"), num(t, "Second")
	if y < 1970 || y > 9999 || mo < 1 || mo > 12 || day < 1 || day > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 {
		return time.Time{}, fmt.Errorf("GetSystemDateAndTime: %w: date out of range", ErrMalformed)
	}
	return time.Date(y, time.Month(mo), day, h, mi, s, 0, time.UTC), nil
}

// Sync reads the camera's clock and keeps its offset from the local clock
// for the UsernameTokens of later requests and the times of its events.
// The camera gives whole seconds, so a measurement is only good to a
// second: one within a second (plus the request's round trip) of the
// offset already known keeps that offset, so that a start and an end
// read on two subscriptions (a camera reboot between them) are corrected
// alike.
func (c *Client) Sync(ctx context.Context) error {
	before := c.now()
	cam, err := c.GetSystemDateAndTime(ctx)
	if err != nil {
		return err
	}
	after := c.now()
	rtt := after.Sub(before)
	mid := before.Add(rtt / 2)
	off := cam.Sub(mid).Truncate(time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.synced && (off-c.offset).Abs() <= time.Second+rtt {
		return nil
	}
	c.offset, c.synced = off, true
	return nil
}

// GetDeviceInformation returns the manufacturer, model, firmware and serial.
func (c *Client) GetDeviceInformation(ctx context.Context) (DeviceInformation, error) {
	env, err := c.call(ctx, c.DeviceURL, nsDevice+"/GetDeviceInformation", `<GetDeviceInformation xmlns="`+nsDevice+`"/>`, true)
	if err != nil {
		return DeviceInformation{}, err
	}
	r := env.Body.Child("GetDeviceInformationResponse")
	if r == nil {
		return DeviceInformation{}, fmt.Errorf("GetDeviceInformation: %w", ErrMalformed)
	}
	return DeviceInformation{
		Manufacturer:    r.Child("Manufacturer").Value(),
		Model:           r.Child("Model").Value(),
		FirmwareVersion: r.Child("FirmwareVersion").Value(),
		SerialNumber:    r.Child("SerialNumber").Value(),
		HardwareID:      r.Child("HardwareId").Value(),
	}, nil
}

// GetServices returns the media and events addresses from GetServices.
func (c *Client) GetServices(ctx context.Context) (Services, error) {
	env, err := c.call(ctx, c.DeviceURL, nsDevice+"/GetServices",
		`<GetServices xmlns="`+nsDevice+`"><IncludeCapability>false</IncludeCapability></GetServices>`, true)
	if err != nil {
		return Services{}, err
	}
	return parseServices(env), nil
}

func parseServices(env *Envelope) Services {
	var s Services
	for _, svc := range env.Body.Child("GetServicesResponse").All("Service") {
		ns, addr := svc.Child("Namespace").Value(), svc.Child("XAddr").Value()
		switch ns {
		case nsMedia:
			s.Media = addr
		case nsEvents:
			s.Events = addr
		case nsMedia2:
			s.Media2 = addr
		}
	}
	return s
}

// GetCapabilities returns the media and events addresses from
// GetCapabilities (the older call, which some cameras alone answer).
func (c *Client) GetCapabilities(ctx context.Context) (Services, error) {
	env, err := c.call(ctx, c.DeviceURL, nsDevice+"/GetCapabilities",
		`<GetCapabilities xmlns="`+nsDevice+`"><Category>All</Category></GetCapabilities>`, true)
	if err != nil {
		return Services{}, err
	}
	return parseCapabilities(env), nil
}

func parseCapabilities(env *Envelope) Services {
	caps := env.Body.Path("GetCapabilitiesResponse", "Capabilities")
	return Services{
		Media:  caps.Path("Media", "XAddr").Value(),
		Events: caps.Path("Events", "XAddr").Value(),
	}
}

// Discover finds the media and events addresses: GetServices, else
// GetCapabilities, else the device address for both (single-endpoint
// cameras). Addresses are rewritten to the host and port of DeviceURL
// (cameras behind NAT or port forwarding advertise their inner address).
// The result is kept for Media and Events calls.
func (c *Client) Discover(ctx context.Context) (Services, error) {
	s, err := c.GetServices(ctx)
	if err != nil || (s.Media == "" && s.Events == "") {
		s2, err2 := c.GetCapabilities(ctx)
		if err2 == nil {
			s, err = s2, nil
		} else if err == nil {
			err = err2
		}
		if errors.Is(err, ErrUnauthorized) {
			return Services{}, err
		}
	}
	useMedia2 := s.Media == "" && s.Media2 != ""
	s.Media = c.rewrite(s.Media)
	s.Events = c.rewrite(s.Events)
	if s.Media2 != "" {
		s.Media2 = c.rewrite(s.Media2)
	}
	c.mu.Lock()
	c.services = s
	c.useMedia2 = useMedia2
	c.mu.Unlock()
	return s, nil
}

// rewrite puts DeviceURL's host and port into addr; an empty or unusable
// addr becomes DeviceURL.
func (c *Client) rewrite(addr string) string {
	dev, err := url.Parse(c.DeviceURL)
	if err != nil {
		return c.DeviceURL
	}
	u, err := url.Parse(strings.TrimSpace(addr))
	if addr == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return c.DeviceURL
	}
	u.Scheme, u.Host = dev.Scheme, dev.Host
	return u.String()
}

// media2 returns the Media2 address when the device advertised Media2 but
// no Media service ("" otherwise: Media is used).
func (c *Client) media2() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.useMedia2 {
		return c.services.Media2
	}
	return ""
}

// endpoint returns the address of a service after Discover (the device
// address before it, or when none was advertised).
func (c *Client) endpoint(events bool) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	addr := c.services.Media
	if events {
		addr = c.services.Events
	}
	if addr == "" {
		return c.DeviceURL
	}
	return addr
}
