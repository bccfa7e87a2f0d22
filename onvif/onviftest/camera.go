package onviftest

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/vigia/vigia/onvif"
)

//go:embed testdata
var fixtures embed.FS

// Options configure a fake camera.
type Options struct {
	// Vendor picks the fixtures and quirks. Required.
	Vendor Vendor
	// User and Password are the credentials the camera accepts.
	User, Password string
	// ClockOffset is the camera's clock minus the real clock.
	ClockOffset time.Duration
	// StreamURI, when set, is the address GetStreamUri returns for every
	// profile instead of the fixture's.
	StreamURI string
	// Addr is the listening address. It defaults to 127.0.0.1:0.
	Addr string
	// MaxPullWait bounds how long a PullMessages waits. It defaults to 2 s.
	MaxPullWait time.Duration
	// Media2Only serves profiles and stream addresses from the Media2
	// service (ver20, testdata/common/media2) alone, as cameras without
	// the Media service do; GetServices lists no Media service.
	Media2Only bool
}

// Camera is a running fake camera.
type Camera struct {
	opts Options
	// URL is the device service address; Base the scheme, host and port.
	URL, Base string

	ln    net.Listener
	srv   *http.Server
	nonce string
	done  chan struct{}

	mu     sync.Mutex
	states map[string]bool
	subs   map[string]*subscription
	nextID int
	calls  map[string]int
	// notified counts the Notify messages consumers accepted (2xx).
	notified int
	senders  sync.WaitGroup
}

type subscription struct {
	id      string
	queue   []string
	wake    chan struct{}
	expires time.Time
	// consumer is the address Notify messages are sent to (a base
	// notification subscription); "" for a PullPoint.
	consumer string
}

// maxQueue bounds the notifications waiting in one subscription.
const maxQueue = 1000

// Start starts a fake camera; Close stops it.
func Start(o Options) (*Camera, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.MaxPullWait <= 0 {
		o.MaxPullWait = 2 * time.Second
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	nb := make([]byte, 12)
	_, _ = rand.Read(nb)
	c := &Camera{
		opts: o, ln: ln, nonce: hex.EncodeToString(nb), done: make(chan struct{}),
		states: map[string]bool{}, subs: map[string]*subscription{}, calls: map[string]int{},
	}
	c.Base = "http://" + ln.Addr().String()
	c.Base = strings.TrimSuffix(c.Base, ":80")
	c.URL = c.Base + "/onvif/device_service"
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// Close stops the camera and waits for its server to end.
func (c *Camera) Close() {
	c.mu.Lock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	c.mu.Unlock()
	_ = c.srv.Close()
	c.senders.Wait()
}

// Set changes the state of an alarm kind (testdata/{vendor}/notify/{kind}.xml)
// and sends a Changed notification to every subscription.
func (c *Camera) Set(kind string, on bool) error {
	msg, err := c.notification(kind, onvif.OpChanged, on)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states[kind] = on
	for _, s := range c.subs {
		s.push(msg)
	}
	return nil
}

// Reboot drops every subscription, as a camera restarting does; the alarm
// states stay.
func (c *Camera) Reboot() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.subs)
}

// Subscriptions is the number of subscriptions open.
func (c *Camera) Subscriptions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// Calls is how many requests of operation op (local name) the camera
// answered successfully.
func (c *Camera) Calls(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

func (s *subscription) push(msg string) {
	if len(s.queue) < maxQueue {
		s.queue = append(s.queue, msg)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (c *Camera) now() time.Time { return time.Now().Add(c.opts.ClockOffset).UTC() }

// fixture reads testdata/{vendor}/{name}, else testdata/common/{name}.
func (c *Camera) fixture(name string) (string, error) {
	b, err := fs.ReadFile(fixtures, "testdata/"+c.opts.Vendor.Name+"/"+name)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = fs.ReadFile(fixtures, "testdata/common/"+name)
	}
	return string(b), err
}

// render executes a fixture as a text/template with data.
func (c *Camera) render(name string, data any) (string, error) {
	src, err := c.fixture(name)
	if err != nil {
		return "", err
	}
	t, err := template.New(name).Parse(src)
	if err != nil {
		return "", fmt.Errorf("fixture %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("fixture %s: %w", name, err)
	}
	return b.String(), nil
}

// notification renders one NotificationMessage of kind.
func (c *Camera) notification(kind, op string, on bool) (string, error) {
	return c.render("notify/"+kind+".xml", map[string]any{
		"Time": c.now().Format("2006-01-02T15:04:05.000Z"), "Op": op, "On": on, "Base": c.Base,
	})
}

// ServeHTTP answers one SOAP request.
func (c *Camera) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	env, err := onvif.ParseEnvelope(body)
	if err != nil || env.First() == nil {
		c.fault(w, http.StatusBadRequest, "Sender", "WellFormed", "not a SOAP envelope")
		return
	}
	op := env.First().Name
	if op != "GetSystemDateAndTime" && !c.authorized(w, r, env) {
		return
	}
	resp, status := c.answer(r, env, op)
	if os.Getenv("ONVIFTEST_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "onviftest: %s %s %d %.300s\n", r.URL.Path, op, status, body)
	}
	if status != http.StatusOK {
		c.fault(w, status, "Sender", resp, op+": "+resp)
		return
	}
	c.mu.Lock()
	c.calls[op]++
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/soap+xml; charset=utf-8")
	// A length, not chunks: cameras send one, and some clients (libonvif)
	// read no chunked bodies.
	w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
	_, _ = io.WriteString(w, resp)
}

func (c *Camera) fault(w http.ResponseWriter, status int, code, sub, reason string) {
	w.Header().Set("Content-Type", "application/soap+xml; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:ter="http://www.onvif.org/ver10/error"><env:Body><env:Fault><env:Code><env:Value>env:%s</env:Value><env:Subcode><env:Value>ter:%s</env:Value></env:Subcode></env:Code><env:Reason><env:Text xml:lang="en">%s</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>`,
		code, sub, template.HTMLEscapeString(reason))
}

// authorized checks the request's credentials as the vendor does and
// answers the refusal itself.
func (c *Camera) authorized(w http.ResponseWriter, r *http.Request, env *onvif.Envelope) bool {
	o := c.opts
	if o.Vendor.Auth == AuthNone {
		return true
	}
	if c.digestOK(r) {
		return true
	}
	if o.Vendor.Auth == AuthDigest {
		w.Header().Set("WWW-Authenticate", `Digest realm="onvif", qop="auth", nonce="`+c.nonce+`", algorithm=MD5`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return false
	}
	if env.Header != nil && onvif.VerifyUsernameToken(env.Header, o.User, o.Password) {
		created := env.Header.Find("Created").Value()
		t, err := time.Parse(time.RFC3339Nano, created)
		if err == nil && t.Sub(c.now()).Abs() <= 5*time.Second {
			return true
		}
	}
	c.fault(w, http.StatusBadRequest, "Sender", "NotAuthorized", "Sender not Authorized")
	return false
}

var digestParam = regexp.MustCompile(`(\w+)=(?:"([^"]*)"|([^,\s]*))`)

// digestOK checks an HTTP digest Authorization (MD5, qop auth).
func (c *Camera) digestOK(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "Digest ") {
		return false
	}
	p := map[string]string{}
	for _, m := range digestParam.FindAllStringSubmatch(h[7:], -1) {
		p[m[1]] = m[2] + m[3]
	}
	md := func(s string) string { s2 := md5.Sum([]byte(s)); return hex.EncodeToString(s2[:]) }
	ha1 := md(c.opts.User + ":" + p["realm"] + ":" + c.opts.Password)
	ha2 := md(r.Method + ":" + p["uri"])
	want := md(ha1 + ":" + p["nonce"] + ":" + p["nc"] + ":" + p["cnonce"] + ":" + p["qop"] + ":" + ha2)
	return p["username"] == c.opts.User && p["nonce"] == c.nonce && p["response"] == want && p["uri"] == r.URL.RequestURI()
}

// Service paths.
const (
	pathDevice = "/onvif/device_service"
	pathMedia  = "/onvif/Media"
	pathMedia2 = "/onvif/Media2"
	pathEvents = "/onvif/Events"
)

// answer returns the response of op, or a fault subcode and an HTTP status.
func (c *Camera) answer(r *http.Request, env *onvif.Envelope, op string) (string, int) {
	v := c.opts.Vendor
	path := r.URL.Path
	want := ""
	switch op {
	case "GetSystemDateAndTime", "GetDeviceInformation", "GetServices", "GetCapabilities", "GetHostname":
		want = pathDevice
	case "GetProfiles", "GetStreamUri", "GetSnapshotUri", "GetVideoSources", "GetProfile":
		want = pathMedia
		if c.opts.Media2Only {
			if env.First().Space != "http://www.onvif.org/ver20/media/wsdl" {
				return "ActionNotSupported", http.StatusBadRequest
			}
			want = pathMedia2
		}
	case "CreatePullPointSubscription", "Subscribe", "GetEventProperties", "GetServiceCapabilities":
		want = pathEvents
	case "PullMessages", "Renew", "Unsubscribe":
		return c.subscriptionOp(r, env, op)
	default:
		return "ActionNotSupported", http.StatusBadRequest
	}
	if v.SingleEndpoint {
		want = pathDevice
		if op == "GetServices" {
			return "ActionNotSupported", http.StatusBadRequest
		}
	}
	if path != want {
		return "ActionNotSupported", http.StatusBadRequest
	}
	now := c.now()
	data := map[string]any{
		"Base": c.Base, "Host": strings.TrimPrefix(c.Base, "http://"), "Now": now.Format(time.RFC3339),
		"Y": now.Year(), "Mo": int(now.Month()), "D": now.Day(), "H": now.Hour(), "Mi": now.Minute(), "S": now.Second(),
		"MediaURL": c.Base + pathMedia, "Media2URL": c.Base + pathMedia2, "EventsURL": c.Base + pathEvents,
	}
	if v.SingleEndpoint {
		data["MediaURL"], data["EventsURL"] = c.URL, c.URL
	}
	switch op {
	case "GetStreamUri", "GetSnapshotUri", "GetProfile":
		tok := env.First().Find("ProfileToken").Value()
		data["Token"] = tok
		if op == "GetStreamUri" && c.opts.StreamURI != "" {
			data["Override"] = c.opts.StreamURI
		}
	case "CreatePullPointSubscription", "Subscribe":
		return c.createSubscription(env, op, data)
	}
	name := op + ".xml"
	if c.opts.Media2Only && (want == pathMedia2 || op == "GetServices") {
		name = "media2/" + name
	}
	out, err := c.render(name, data)
	if err != nil {
		return "ActionNotSupported", http.StatusBadRequest
	}
	return out, http.StatusOK
}

// parseDuration reads PT{n}S, PT{n}M, PT{n}H (and sums of them).
func parseDuration(s string) time.Duration {
	s = strings.TrimPrefix(strings.TrimSpace(s), "PT")
	var d time.Duration
	num := ""
	for _, ch := range s {
		switch {
		case ch >= '0' && ch <= '9' || ch == '.':
			num += string(ch)
		default:
			f, _ := strconv.ParseFloat(num, 64)
			num = ""
			switch ch {
			case 'H':
				d += time.Duration(f * float64(time.Hour))
			case 'M':
				d += time.Duration(f * float64(time.Minute))
			case 'S':
				d += time.Duration(f * float64(time.Second))
			}
		}
	}
	return d
}

// createSubscription makes a PullPoint (op CreatePullPointSubscription)
// or a base notification subscription (op Subscribe, whose messages a
// sender goroutine POSTs to the consumer address as Notify messages).
func (c *Camera) createSubscription(env *onvif.Envelope, op string, data map[string]any) (string, int) {
	term := parseDuration(env.First().Child("InitialTerminationTime").Value())
	if term <= 0 {
		term = time.Minute
	}
	consumer := ""
	if op == "Subscribe" {
		consumer = env.First().Path("ConsumerReference", "Address").Value()
		if !strings.HasPrefix(consumer, "http://") && !strings.HasPrefix(consumer, "https://") {
			return "InvalidArgVal", http.StatusBadRequest
		}
	}
	v := c.opts.Vendor
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	s := &subscription{id: id, wake: make(chan struct{}, 1), expires: time.Now().Add(term), consumer: consumer}
	// The camera replays its current states first, then what changes: the
	// replay is queued with the subscription made, under one lock, so that
	// a change (Set) comes after it.
	for _, k := range v.Kinds {
		msg, err := c.notification(k, onvif.OpInitialized, c.states[k])
		if err != nil {
			continue
		}
		s.push(msg)
	}
	c.subs[id] = s
	if consumer != "" {
		c.senders.Add(1)
		go c.send(s)
	}
	c.mu.Unlock()
	addr := c.Base + "/onvif/subscription/" + id
	switch {
	case v.ReferenceParameters:
		addr = c.Base + "/onvif/services"
	case v.SingleEndpoint:
		addr = c.Base + "/event-" + id + "_2020"
	}
	data["SubAddress"] = addr
	data["SubID"] = id
	data["Term"] = c.now().Add(term).Format(time.RFC3339)
	out, err := c.render(op+".xml", data)
	if err != nil {
		return "ActionNotSupported", http.StatusBadRequest
	}
	return out, http.StatusOK
}

// send POSTs the messages of push subscription s to its consumer, as
// Notify messages, until the subscription ends (unsubscribed, expired,
// dropped by Reboot) or the camera closes. A message the consumer does not
// accept is dropped, as cameras do.
func (c *Camera) send(s *subscription) {
	defer c.senders.Done()
	client := &http.Client{Timeout: 5 * time.Second}
	check := time.NewTicker(50 * time.Millisecond)
	defer check.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-s.wake:
		case <-check.C:
		}
		c.mu.Lock()
		live := c.subs[s.id] == s && time.Now().Before(s.expires)
		msgs := strings.Join(s.queue, "")
		s.queue = nil
		c.mu.Unlock()
		if !live {
			return
		}
		if msgs == "" {
			continue
		}
		body, err := c.render("Notify.xml", map[string]any{"Messages": msgs, "Consumer": s.consumer})
		if err != nil {
			continue
		}
		res, err := client.Post(s.consumer, "application/soap+xml; charset=utf-8", strings.NewReader(body))
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode/100 == 2 {
			c.mu.Lock()
			c.notified++
			c.mu.Unlock()
		}
	}
}

// Notified is the number of Notify messages consumers accepted.
func (c *Camera) Notified() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notified
}

// lookup finds the subscription a request addresses.
func (c *Camera) lookup(r *http.Request, env *onvif.Envelope) *subscription {
	v := c.opts.Vendor
	var id string
	switch {
	case v.ReferenceParameters:
		if r.URL.Path != "/onvif/services" {
			return nil
		}
		id = env.Header.Find("SubscriptionId").Value()
	case v.SingleEndpoint:
		id = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/event-"), "_2020")
	default:
		id = strings.TrimPrefix(r.URL.Path, "/onvif/subscription/")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.subs[id]
	if s != nil && time.Now().After(s.expires) {
		delete(c.subs, id)
		return nil
	}
	return s
}

func (c *Camera) subscriptionOp(r *http.Request, env *onvif.Envelope, op string) (string, int) {
	if c.opts.Vendor.StrictAddressing {
		if env.Header.Find("Action").Value() == "" || env.Header.Find("To").Value() == "" {
			return "MissingAddressing", http.StatusBadRequest
		}
	}
	s := c.lookup(r, env)
	if s == nil {
		return "ResourceUnknown", http.StatusBadRequest
	}
	data := map[string]any{"Base": c.Base}
	switch op {
	case "Renew":
		term := parseDuration(env.First().Child("TerminationTime").Value())
		if term <= 0 {
			term = time.Minute
		}
		c.mu.Lock()
		s.expires = time.Now().Add(term)
		c.mu.Unlock()
		data["Now"] = c.now().Format(time.RFC3339)
		data["Term"] = c.now().Add(term).Format(time.RFC3339)
	case "Unsubscribe":
		c.mu.Lock()
		delete(c.subs, s.id)
		c.mu.Unlock()
	case "PullMessages":
		wait := parseDuration(env.First().Child("Timeout").Value())
		if wait > c.opts.MaxPullWait {
			wait = c.opts.MaxPullWait
		}
		limit, err := strconv.Atoi(env.First().Child("MessageLimit").Value())
		if err != nil || limit <= 0 {
			limit = 100
		}
		c.mu.Lock()
		empty := len(s.queue) == 0
		c.mu.Unlock()
		if empty {
			t := time.NewTimer(wait)
			select {
			case <-s.wake:
			case <-t.C:
			case <-c.done:
			case <-r.Context().Done():
			}
			t.Stop()
		}
		c.mu.Lock()
		n := min(limit, len(s.queue))
		msgs := strings.Join(s.queue[:n], "")
		s.queue = s.queue[n:]
		if len(s.queue) > 0 {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
		term := s.expires
		c.mu.Unlock()
		data["Messages"] = msgs
		data["Now"] = c.now().Format(time.RFC3339)
		data["Term"] = term.Add(c.opts.ClockOffset).UTC().Format(time.RFC3339)
	}
	out, err := c.render(op+".xml", data)
	if err != nil {
		return "ActionNotSupported", http.StatusBadRequest
	}
	return out, http.StatusOK
}
