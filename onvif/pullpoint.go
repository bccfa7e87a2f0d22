package onvif

import (
	"context"
	"time"
)

// PullPoint defaults.
const (
	// DefaultPullWait is how long one PullMessages waits for notifications.
	DefaultPullWait = 10 * time.Second
	// DefaultTermination is the subscription's lifetime, renewed at half.
	DefaultTermination = 60 * time.Second
	// DefaultMessageLimit is the most notifications one PullMessages returns.
	DefaultMessageLimit = 100
)

// PullPoint runs one PullPoint subscription on a camera and turns its
// notifications into Events through a Joiner.
type PullPoint struct {
	// Client is the camera's client.
	Client *Client
	// Joiner joins starts and ends. Keep it across Runs: a state that began
	// before a re-subscription ends in the next one. Required.
	Joiner *Joiner
	// OnEvent receives each joined event, on Run's goroutine. Required.
	OnEvent func(Event)
	// OnSubscribed, when set, is called once the subscription exists.
	OnSubscribed func()
	// OnNotification, when set, receives every notification (with the
	// local time it was given), before it is joined.
	OnNotification func(Notification, time.Time)
	// Wait is the PullMessages wait. It defaults to DefaultPullWait.
	Wait time.Duration
	// Termination is the subscription's lifetime, renewed when half of it
	// has passed. It defaults to DefaultTermination.
	Termination time.Duration
	// Limit is the PullMessages message limit. It defaults to
	// DefaultMessageLimit.
	Limit int
}

// Run reads the camera's clock, finds its events service, subscribes, and
// pulls until ctx ends (then unsubscribes and returns nil) or a request
// fails (then returns the error; the caller decides when to run again,
// which re-creates the subscription, and the camera replays its current
// states as Initialized messages).
func (p *PullPoint) Run(ctx context.Context) error {
	c := p.Client
	wait, term, limit := p.Wait, p.Termination, p.Limit
	if wait <= 0 {
		wait = DefaultPullWait
	}
	if term <= 0 {
		term = DefaultTermination
	}
	if term < 2*wait {
		term = 2 * wait
	}
	if limit <= 0 {
		limit = DefaultMessageLimit
	}
	if err := c.Sync(ctx); err != nil {
		return err
	}
	if _, err := c.Discover(ctx); err != nil {
		return err
	}
	sub, err := c.CreatePullPointSubscription(ctx, term)
	if err != nil {
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
	renewed := c.now()
	for {
		if ctx.Err() != nil {
			return nil
		}
		if c.now().Sub(renewed) >= term/2 {
			if err := c.Renew(ctx, sub, term); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			renewed = c.now()
		}
		res, err := c.PullMessages(ctx, sub, wait, limit)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		now := deliver(c, p.Joiner, res.Messages, p.OnNotification, p.OnEvent)
		for _, e := range p.Joiner.Expire(now) {
			p.OnEvent(e)
		}
	}
}

// deliver hands notifications received now to onNotification and joiner,
// and joined events to onEvent; it returns now. Each notification's time
// is the camera's, corrected by the clock offset, unless it is unset or
// far from now (a camera clock that jumped), and never after it was
// received (the offset is known to the second).
func deliver(c *Client, joiner *Joiner, msgs []Notification, onNotification func(Notification, time.Time), onEvent func(Event)) time.Time {
	now := c.now()
	off := c.ClockOffset()
	for _, n := range msgs {
		t := now
		if !n.Time.IsZero() {
			if lt := n.Time.Add(-off); lt.Sub(now).Abs() < time.Hour && lt.Before(now) {
				t = lt
			}
		}
		if onNotification != nil {
			onNotification(n, t)
		}
		for _, e := range joiner.Add(n, t) {
			onEvent(e)
		}
	}
	return now
}
