package onvif

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Push mode (WS-BaseNotification, ONVIF Core 9.2): the node subscribes a
// consumer address of its own, the camera POSTs Notify messages to it, and
// the node renews the subscription.

// DefaultPushTick is how often a Push ends events held on for longer than
// the Joiner's MaxDuration when no notification comes.
const DefaultPushTick = time.Second

// Subscribe subscribes consumer (an HTTP address the camera sends Notify
// messages to) to every topic; the camera ends the subscription after
// termination unless it is renewed.
func (c *Client) Subscribe(ctx context.Context, consumer string, termination time.Duration) (*Subscription, error) {
	body := `<Subscribe xmlns="` + nsWSNT + `"><ConsumerReference><a:Address>` + xmlEscape(consumer) + `</a:Address></ConsumerReference>` +
		`<InitialTerminationTime>` + isoDuration(termination) + `</InitialTerminationTime></Subscribe>`
	env, err := c.call(ctx, c.endpoint(true), nsEvents+"/NotificationProducer/SubscribeRequest", body, true)
	if err != nil {
		return nil, err
	}
	r := env.Body.Child("SubscribeResponse")
	ref := r.Child("SubscriptionReference")
	addr := ref.Child("Address").Value()
	if addr == "" {
		return nil, fmt.Errorf("Subscribe: %w: no SubscriptionReference/Address", ErrMalformed)
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

// ParseNotify parses a Notify message a camera sent to a consumer
// address: its notifications that parsed, and how many did not. It never
// panics and allocates in proportion to the bytes given.
func ParseNotify(data []byte) (PullResult, error) {
	env, err := ParseEnvelope(data)
	if err != nil {
		return PullResult{}, err
	}
	if r := env.First(); r == nil || r.Name != "Notify" {
		return PullResult{}, fmt.Errorf("%w: not a Notify", ErrMalformed)
	}
	return parsePullMessages(env)
}

// Push runs one base-notification subscription on a camera and turns the
// notifications received at its consumer address into Events through a
// Joiner.
type Push struct {
	// Client is the camera's client.
	Client *Client
	// Joiner joins starts and ends; keep it across Runs. Required.
	Joiner *Joiner
	// Consumer is the address the camera sends its Notify messages to.
	// Required.
	Consumer string
	// Notifications carries what the consumer address received for this
	// subscription (ParseNotify's Messages). Required.
	Notifications <-chan []Notification
	// OnEvent receives each joined event, on Run's goroutine. Required.
	OnEvent func(Event)
	// OnSubscribed, when set, is called once the subscription exists.
	OnSubscribed func()
	// OnNotification, when set, receives every notification (with the
	// local time it was given), before it is joined.
	OnNotification func(Notification, time.Time)
	// Termination is the subscription's lifetime, renewed when half of it
	// has passed. It defaults to DefaultTermination.
	Termination time.Duration
	// Tick is how often events held on too long are ended. It defaults to
	// DefaultPushTick.
	Tick time.Duration
	// FirstNotify, when positive, bounds the wait for the first Notify
	// message: cameras send their current states when subscribed, so
	// silence means the camera may not reach the consumer address, and Run
	// returns ErrNoNotify.
	FirstNotify time.Duration
}

// subscribe reads the camera's clock, finds its events service and
// subscribes the consumer address.
func (p *Push) subscribe(ctx context.Context, term time.Duration) (*Subscription, error) {
	if err := p.Client.Sync(ctx); err != nil {
		return nil, err
	}
	if _, err := p.Client.Discover(ctx); err != nil {
		return nil, err
	}
	return p.Client.Subscribe(ctx, p.Consumer, term)
}

// Run reads the camera's clock, finds its events service, subscribes the
// consumer address, and joins what arrives on Notifications until ctx
// ends (then unsubscribes and returns nil) or a request fails (a Renew
// refused after the camera restarted: then returns the error; the caller
// decides when to run again).
func (p *Push) Run(ctx context.Context) error {
	c := p.Client
	term, tick := p.Termination, p.Tick
	if term <= 0 {
		term = DefaultTermination
	}
	if tick <= 0 {
		tick = DefaultPushTick
	}
	sub, err := p.subscribe(ctx, term)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = c.Unsubscribe(uctx, sub)
	}()
	if p.OnSubscribed != nil {
		p.OnSubscribed()
	}
	renew := time.NewTicker(term / 2)
	defer renew.Stop()
	expire := time.NewTicker(tick)
	defer expire.Stop()
	var first <-chan time.Time
	if p.FirstNotify > 0 {
		t := time.NewTimer(p.FirstNotify)
		defer t.Stop()
		first = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-first:
			return ErrNoNotify
		case <-renew.C:
			if err := c.Renew(ctx, sub, term); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		case msgs := <-p.Notifications:
			first = nil
			deliver(c, p.Joiner, msgs, p.OnNotification, p.OnEvent)
		case <-expire.C:
			for _, e := range p.Joiner.Expire(c.now()) {
				p.OnEvent(e)
			}
		}
	}
}
