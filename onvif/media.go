package onvif

import (
	"context"
	"fmt"
	"strconv"
)

// Profile is a media profile.
type Profile struct {
	// Token identifies the profile in GetStreamUri and GetSnapshotUri.
	Token, Name string
	// Encoding is the video encoding (H264, H265, JPEG), empty when the
	// profile has no video encoder.
	Encoding string
	// Width and Height are the encoder's resolution (0 when unknown).
	Width, Height int
}

// GetProfiles returns the media profiles in the camera's order (by
// convention the main stream first), from the Media service, or from
// Media2 when the camera has only that (after Discover).
func (c *Client) GetProfiles(ctx context.Context) ([]Profile, error) {
	if m2 := c.media2(); m2 != "" {
		env, err := c.call(ctx, m2, nsMedia2+"/GetProfiles", `<GetProfiles xmlns="`+nsMedia2+`"><Type>VideoEncoder</Type></GetProfiles>`, true)
		if err != nil {
			return nil, err
		}
		return parseProfiles(env)
	}
	env, err := c.call(ctx, c.endpoint(false), nsMedia+"/GetProfiles", `<GetProfiles xmlns="`+nsMedia+`"/>`, true)
	if err != nil {
		return nil, err
	}
	return parseProfiles(env)
}

func parseProfiles(env *Envelope) ([]Profile, error) {
	r := env.Body.Child("GetProfilesResponse")
	if r == nil {
		return nil, fmt.Errorf("GetProfiles: %w", ErrMalformed)
	}
	var out []Profile
	for _, p := range r.All("Profiles") {
		tok := p.Attr("token")
		if tok == "" {
			continue
		}
		vec := p.Child("VideoEncoderConfiguration")
		if vec == nil { // Media2
			vec = p.Path("Configurations", "VideoEncoder")
		}
		w, _ := strconv.Atoi(vec.Path("Resolution", "Width").Value())
		h, _ := strconv.Atoi(vec.Path("Resolution", "Height").Value())
		out = append(out, Profile{
			Token: tok, Name: p.Child("Name").Value(),
			Encoding: vec.Child("Encoding").Value(), Width: w, Height: h,
		})
	}
	return out, nil
}

// GetStreamUri returns the RTSP address (RTP unicast over RTSP) of
// profile, from Media2 when the camera has only that (after Discover).
func (c *Client) GetStreamUri(ctx context.Context, profile string) (string, error) {
	if m2 := c.media2(); m2 != "" {
		body := `<GetStreamUri xmlns="` + nsMedia2 + `"><Protocol>RTSP</Protocol><ProfileToken>` + xmlEscape(profile) + `</ProfileToken></GetStreamUri>`
		env, err := c.call(ctx, m2, nsMedia2+"/GetStreamUri", body, true)
		if err != nil {
			return "", err
		}
		return media2URI(env, "GetStreamUriResponse")
	}
	body := `<GetStreamUri xmlns="` + nsMedia + `"><StreamSetup>` +
		`<Stream xmlns="` + nsSchema + `">RTP-Unicast</Stream>` +
		`<Transport xmlns="` + nsSchema + `"><Protocol>RTSP</Protocol></Transport>` +
		`</StreamSetup><ProfileToken>` + xmlEscape(profile) + `</ProfileToken></GetStreamUri>`
	env, err := c.call(ctx, c.endpoint(false), nsMedia+"/GetStreamUri", body, true)
	if err != nil {
		return "", err
	}
	return mediaURI(env, "GetStreamUriResponse")
}

// GetSnapshotUri returns the JPEG snapshot address of profile, from
// Media2 when the camera has only that (after Discover).
func (c *Client) GetSnapshotUri(ctx context.Context, profile string) (string, error) {
	if m2 := c.media2(); m2 != "" {
		body := `<GetSnapshotUri xmlns="` + nsMedia2 + `"><ProfileToken>` + xmlEscape(profile) + `</ProfileToken></GetSnapshotUri>`
		env, err := c.call(ctx, m2, nsMedia2+"/GetSnapshotUri", body, true)
		if err != nil {
			return "", err
		}
		return media2URI(env, "GetSnapshotUriResponse")
	}
	body := `<GetSnapshotUri xmlns="` + nsMedia + `"><ProfileToken>` + xmlEscape(profile) + `</ProfileToken></GetSnapshotUri>`
	env, err := c.call(ctx, c.endpoint(false), nsMedia+"/GetSnapshotUri", body, true)
	if err != nil {
		return "", err
	}
	return mediaURI(env, "GetSnapshotUriResponse")
}

func mediaURI(env *Envelope, resp string) (string, error) {
	u := env.Body.Path(resp, "MediaUri", "Uri").Value()
	if u == "" {
		return "", fmt.Errorf("%s: %w: no MediaUri/Uri", resp, ErrMalformed)
	}
	return u, nil
}

// media2URI reads the Uri of a Media2 response (resp).
func media2URI(env *Envelope, resp string) (string, error) {
	u := env.Body.Path(resp, "Uri").Value()
	if u == "" {
		return "", fmt.Errorf("%s: %w: no Uri", resp, ErrMalformed)
	}
	return u, nil
}
