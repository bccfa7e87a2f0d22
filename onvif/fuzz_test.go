package onvif

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureSeeds adds every fixture of the fake camera as a seed.
func fixtureSeeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("onviftest", "testdata", pattern))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParseEnvelope feeds a response to every response parser.
func FuzzParseEnvelope(f *testing.F) {
	fixtureSeeds(f, "*/*.xml")
	f.Add([]byte(`<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><s:Fault><s:Code><s:Value>s:Sender</s:Value><s:Subcode><s:Value>ter:NotAuthorized</s:Value></s:Subcode></s:Code></s:Fault></s:Body></s:Envelope>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, _ := ParseEnvelope(data)
		if env == nil {
			return
		}
		_, _ = parseSystemDateAndTime(env)
		_ = parseServices(env)
		_ = parseCapabilities(env)
		_, _ = parseProfiles(env)
		_, _ = mediaURI(env, "GetStreamUriResponse")
		_, _ = media2URI(env, "GetStreamUriResponse")
		_, _ = parsePullMessages(env)
		_ = VerifyUsernameToken(env.Header, "admin", "x")
		b := env.First()
		if b != nil {
			var s strings.Builder
			b.marshal(&s)
		}
	})
}

// FuzzParseNotification parses one NotificationMessage and joins it.
func FuzzParseNotification(f *testing.F) {
	fixtureSeeds(f, "*/notify/*.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := parseXML(data)
		if err != nil {
			return
		}
		n, err := ParseNotification(root)
		if err != nil {
			return
		}
		var j Joiner
		for _, op := range []string{n.Operation, OpInitialized, OpChanged, OpDeleted} {
			n.Operation = op
			for _, e := range j.Add(n, time.Unix(0, 0)) {
				if e.End.Before(e.Start) {
					t.Fatalf("event ends before it starts: %+v", e)
				}
				_ = e.ID("cam")
			}
		}
		_ = j.Expire(time.Unix(3600, 0))
	})
}

// FuzzParsePullMessages parses a whole PullMessagesResponse.
func FuzzParsePullMessages(f *testing.F) {
	fixtureSeeds(f, "common/PullMessages.xml")
	for _, k := range []string{"hikvision/notify/motion.xml", "hanwha/notify/sound.xml", "axis/notify/motion.xml"} {
		b, err := os.ReadFile(filepath.Join("onviftest", "testdata", k))
		if err == nil {
			f.Add([]byte(`<Envelope><Body><PullMessagesResponse><CurrentTime>2026-03-01T10:00:00Z</CurrentTime>` + string(b) + `</PullMessagesResponse></Body></Envelope>`))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParsePullMessages(data)
		if err != nil {
			return
		}
		if len(res.Messages) > maxNodes {
			t.Fatalf("%d messages", len(res.Messages))
		}
	})
}

// FuzzParseChallenge parses WWW-Authenticate headers and answers them.
func FuzzParseChallenge(f *testing.F) {
	f.Add(`Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"`)
	f.Add(`Digest realm="onvif", nonce="abc", algorithm=SHA-256, qop=auth`)
	f.Add(`Basic realm="x"`)
	f.Fuzz(func(t *testing.T, h string) {
		c, ok := parseChallenge(h)
		if !ok {
			return
		}
		_, _ = c.authorization("u", "p", "POST", "/onvif/device_service", 1, "c")
	})
}

// FuzzParseProbeMatches feeds WS-Discovery answers to their parser.
func FuzzParseProbeMatches(f *testing.F) {
	f.Add([]byte(probeMatchesHik), "urn:uuid:probe-1")
	f.Add([]byte(probeMatchesHik), "")
	f.Add(ProbeMessage("urn:uuid:x"), "")
	f.Fuzz(func(t *testing.T, data []byte, relates string) {
		ms, err := ParseProbeMatches(data, relates)
		if err != nil && len(ms) > 0 {
			t.Fatal("matches with an error")
		}
		if len(ms) > maxMatches {
			t.Fatalf("%d matches", len(ms))
		}
		for _, m := range ms {
			if len(m.XAddrs) == 0 {
				t.Fatal("a match without XAddrs")
			}
			_ = m.Scope("hardware")
		}
	})
}

// FuzzParseNotify feeds what a camera may POST to a consumer address to
// the Notify parser.
func FuzzParseNotify(f *testing.F) {
	fixtureSeeds(f, "*/notify/*.xml")
	fixtureSeeds(f, "common/Notify.xml")
	f.Add([]byte(`<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:wsnt="http://docs.oasis-open.org/wsn/b-2" xmlns:tt="http://www.onvif.org/ver10/schema"><s:Body><wsnt:Notify>` +
		`<wsnt:NotificationMessage><wsnt:Topic Dialect="http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet">tns1:VideoSource/MotionAlarm</wsnt:Topic>` +
		`<wsnt:Message><tt:Message UtcTime="2026-01-02T03:04:05Z" PropertyOperation="Changed"><tt:Source><tt:SimpleItem Name="Source" Value="1"/></tt:Source>` +
		`<tt:Data><tt:SimpleItem Name="State" Value="true"/></tt:Data></tt:Message></wsnt:Message></wsnt:NotificationMessage></wsnt:Notify></s:Body></s:Envelope>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParseNotify(data)
		if err != nil && (len(res.Messages) > 0 || res.Skipped > 0) {
			t.Fatal("notifications with an error")
		}
		for _, n := range res.Messages {
			if r, ok := Classify(n); ok {
				_, _ = State(r, n)
			}
		}
	})
}
