package onvif

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Subscription is a PullPoint subscription on the camera.
type Subscription struct {
	// Address is where PullMessages, Renew and Unsubscribe go.
	Address string
	// TerminationTime is when the camera ends the subscription unless
	// renewed (camera clock; zero when the camera did not say).
	TerminationTime time.Time
	// refParams are the ReferenceParameters of the subscription reference,
	// echoed as SOAP headers on every request to it (WS-Addressing).
	refParams string
}

// wsaHeader is the WS-Addressing header of a request to the subscription:
// strict cameras refuse PullMessages without Action and To, and cameras
// that hand out ReferenceParameters need them back.
func (s *Subscription) wsaHeader(action string) string {
	return `<a:Action s:mustUnderstand="1">` + xmlEscape(action) + `</a:Action>` +
		`<a:To s:mustUnderstand="1">` + xmlEscape(s.Address) + `</a:To>` + s.refParams
}

// isoDuration formats d as an xs:duration of whole seconds (PT60S).
func isoDuration(d time.Duration) string {
	sec := int64(d / time.Second)
	if sec < 1 {
		sec = 1
	}
	return fmt.Sprintf("PT%dS", sec)
}

// CreatePullPointSubscription subscribes to every topic; the camera ends
// the subscription after termination unless it is renewed.
func (c *Client) CreatePullPointSubscription(ctx context.Context, termination time.Duration) (*Subscription, error) {
	body := `<CreatePullPointSubscription xmlns="` + nsEvents + `"><InitialTerminationTime>` + isoDuration(termination) +
		`</InitialTerminationTime></CreatePullPointSubscription>`
	env, err := c.call(ctx, c.endpoint(true), nsEvents+"/EventPortType/CreatePullPointSubscriptionRequest", body, true)
	if err != nil {
		return nil, err
	}
	r := env.Body.Child("CreatePullPointSubscriptionResponse")
	ref := r.Child("SubscriptionReference")
	addr := ref.Child("Address").Value()
	if addr == "" {
		return nil, fmt.Errorf("CreatePullPointSubscription: %w: no SubscriptionReference/Address", ErrMalformed)
	}
	s := &Subscription{Address: c.rewrite(addr)}
	s.TerminationTime, _ = parseUTCTime(r.Child("TerminationTime").Value())
	if rp := ref.Child("ReferenceParameters"); rp != nil {
		var b strings.Builder
		for _, p := range rp.Children {
			p.marshal(&b)
		}
		s.refParams = b.String()
	}
	return s, nil
}

// PullMessages waits up to wait for at most limit notifications.
func (c *Client) PullMessages(ctx context.Context, s *Subscription, wait time.Duration, limit int) (PullResult, error) {
	action := nsEvents + "/PullPointSubscription/PullMessagesRequest"
	body := `<PullMessages xmlns="` + nsEvents + `"><Timeout>` + isoDuration(wait) + `</Timeout><MessageLimit>` +
		fmt.Sprint(limit) + `</MessageLimit></PullMessages>`
	env, err := c.callWith(ctx, s.Address, action, body, callOpts{auth: true, header: s.wsaHeader(action), extra: wait})
	if err != nil {
		return PullResult{}, err
	}
	return parsePullMessages(env)
}

// Renew extends the subscription by termination.
func (c *Client) Renew(ctx context.Context, s *Subscription, termination time.Duration) error {
	action := nsWSNT + "/SubscriptionManager/RenewRequest"
	body := `<Renew xmlns="` + nsWSNT + `"><TerminationTime>` + isoDuration(termination) + `</TerminationTime></Renew>`
	env, err := c.callWith(ctx, s.Address, action, body, callOpts{auth: true, header: s.wsaHeader(action)})
	if err != nil {
		return err
	}
	if t, err := parseUTCTime(env.Body.Path("RenewResponse", "TerminationTime").Value()); err == nil {
		s.TerminationTime = t
	}
	return nil
}

// Unsubscribe ends the subscription.
func (c *Client) Unsubscribe(ctx context.Context, s *Subscription) error {
	action := nsWSNT + "/SubscriptionManager/UnsubscribeRequest"
	_, err := c.callWith(ctx, s.Address, action, `<Unsubscribe xmlns="`+nsWSNT+`"/>`, callOpts{auth: true, header: s.wsaHeader(action)})
	return err
}
