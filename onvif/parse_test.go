package onvif

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUsernameToken(t *testing.T) {
	nonce := make([]byte, 16)
	for i := range nonce {
		nonce[i] = byte(i)
	}
	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	h := usernameToken("admin", "Secret#1", nonce, created)
	// Base64(SHA-1(nonce + "2026-03-01T10:00:00.000Z" + "Secret#1")),
	// computed independently.
	if !strings.Contains(h, ">1YPBFzh/uCrcT9w6RSKy804YGRA=<") {
		t.Fatalf("digest not found in %s", h)
	}
	if !strings.Contains(h, "<wsu:Created>2026-03-01T10:00:00.000Z</wsu:Created>") {
		t.Fatalf("created not found in %s", h)
	}
	env, err := ParseEnvelope(buildEnvelope(h, "<X/>"))
	if err != nil {
		t.Fatal(err)
	}
	if !VerifyUsernameToken(env.Header, "admin", "Secret#1") {
		t.Fatal("token does not verify")
	}
	if VerifyUsernameToken(env.Header, "admin", "other") || VerifyUsernameToken(env.Header, "root", "Secret#1") {
		t.Fatal("token verifies with other credentials")
	}
}

func TestDigestAuthorization(t *testing.T) {
	// RFC 2617, section 3.5.
	c, ok := parseChallenge(`Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"`)
	if !ok {
		t.Fatal("challenge not parsed")
	}
	a, err := c.authorization("Mufasa", "Circle Of Life", "GET", "/dir/index.html", 1, "0a4f113b")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`response="6629fae49393a05397450978507c4ef1"`, `nc=00000001`, `qop=auth,`, `opaque="5ccc069c403ebaf9f0171e9517f40e41"`} {
		if !strings.Contains(a, want) {
			t.Errorf("%s lacks %s", a, want)
		}
	}
	if _, ok := parseChallenge(`Basic realm="x"`); ok {
		t.Fatal("basic challenge taken for digest")
	}
	if _, err := (challenge{nonce: "n", algorithm: "SHA-512-256"}).authorization("u", "p", "POST", "/", 1, "c"); err == nil {
		t.Fatal("unsupported algorithm accepted")
	}
}

func TestParseEnvelope(t *testing.T) {
	deep := strings.Repeat("<a>", maxDepth+1) + strings.Repeat("</a>", maxDepth+1)
	tests := []struct {
		name    string
		in      string
		err     error
		subcode string
	}{
		{"soap 1.2", `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><R/></e:Body></e:Envelope>`, nil, ""},
		{"no prefix", `<Envelope xmlns="http://www.w3.org/2003/05/soap-envelope"><Body><R/></Body></Envelope>`, nil, ""},
		{"fault 1.2", `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:ter="http://www.onvif.org/ver10/error"><s:Body><s:Fault><s:Code><s:Value>s:Sender</s:Value><s:Subcode><s:Value>ter:NotAuthorized</s:Value></s:Subcode></s:Code><s:Reason><s:Text xml:lang="en">Sender not Authorized</s:Text></s:Reason></s:Fault></s:Body></s:Envelope>`, ErrUnauthorized, "NotAuthorized"},
		{"fault 1.1", `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>bad</faultstring></s:Fault></s:Body></s:Envelope>`, nil, ""},
		{"not an envelope", `<html><body>login</body></html>`, ErrMalformed, ""},
		{"no body", `<Envelope/>`, ErrMalformed, ""},
		{"too deep", `<Envelope><Body>` + deep + `</Body></Envelope>`, ErrMalformed, ""},
		{"doctype", `<!DOCTYPE x [<!ENTITY a "b">]><Envelope><Body>&a;</Body></Envelope>`, ErrMalformed, ""},
		{"unclosed", `<Envelope><Body>`, ErrMalformed, ""},
		{"empty", ``, ErrMalformed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnvelope([]byte(tc.in))
			var f *Fault
			if tc.name == "fault 1.1" {
				if !errors.As(err, &f) || f.Code != "Client" || f.Reason != "bad" {
					t.Fatalf("err %v, want the 1.1 fault", err)
				}
				return
			}
			if tc.err == nil && err != nil {
				t.Fatalf("err %v", err)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if tc.subcode != "" && (!errors.As(err, &f) || f.Subcode != tc.subcode) {
				t.Fatalf("fault %v, want subcode %s", err, tc.subcode)
			}
		})
	}
}

// notificationXML is one notification written with the given prefixes.
func notificationXML(wsnt, tt, topic, op, data string) string {
	return `<` + wsnt + `:NotificationMessage xmlns:` + wsnt + `="http://docs.oasis-open.org/wsn/b-2" xmlns:` + tt + `="http://www.onvif.org/ver10/schema">` +
		`<` + wsnt + `:Topic Dialect="http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet">` + topic + `</` + wsnt + `:Topic>` +
		`<` + wsnt + `:Message><` + tt + `:Message UtcTime="2026-03-01T10:00:01.5Z" PropertyOperation="` + op + `">` +
		`<` + tt + `:Source><` + tt + `:SimpleItem Name="VideoSourceConfigurationToken" Value="vs1"/></` + tt + `:Source>` +
		`<` + tt + `:Data>` + data + `</` + tt + `:Data>` +
		`</` + tt + `:Message></` + wsnt + `:Message></` + wsnt + `:NotificationMessage>`
}

func parseNote(t *testing.T, s string) Notification {
	t.Helper()
	n, err := parseXML([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseNotification(n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseNotificationPrefixes(t *testing.T) {
	var first Notification
	for i, p := range [][2]string{{"wsnt", "tt"}, {"ns1", "ns2"}, {"a", "b"}} {
		n := parseNote(t, notificationXML(p[0], p[1], "tns1:RuleEngine/CellMotionDetector/Motion", "Changed", `<`+p[1]+`:SimpleItem Name="IsMotion" Value="true"/>`))
		if n.Path != "RuleEngine/CellMotionDetector/Motion" || n.Operation != OpChanged || len(n.Data) != 1 || n.Data[0] != (Item{"IsMotion", "true"}) ||
			len(n.Source) != 1 || !n.Time.Equal(time.Date(2026, 3, 1, 10, 0, 1, 5e8, time.UTC)) {
			t.Fatalf("prefixes %v: %+v", p, n)
		}
		if i == 0 {
			first = n
		} else if n.Path != first.Path || n.Data[0] != first.Data[0] {
			t.Fatalf("prefixes %v parse differently", p)
		}
	}
	// Items directly under wsnt:Message (no tt:Message).
	n := parseNote(t, `<NotificationMessage><Topic>tns1:VideoSource/MotionAlarm</Topic><Message><Data><SimpleItem Name="State" Value="true"/></Data></Message></NotificationMessage>`)
	if n.Path != "VideoSource/MotionAlarm" || len(n.Data) != 1 {
		t.Fatalf("%+v", n)
	}
	if _, err := ParseNotification(&Node{Name: "NotificationMessage"}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("notification without topic: %v", err)
	}
}

func TestTopicPath(t *testing.T) {
	for in, want := range map[string]string{
		"tns1:RuleEngine/CellMotionDetector/Motion":        "RuleEngine/CellMotionDetector/Motion",
		"tns1:Device/tns1:Trigger/tnssamsung:DigitalInput": "Device/Trigger/DigitalInput",
		"tns1:Device/Trigger/tnshik:AlarmIn":               "Device/Trigger/AlarmIn",
		" tns1:VideoSource/MotionAlarm|tns1:Other ":        "VideoSource/MotionAlarm",
		"//": "",
	} {
		if got := topicPath(in); got != want {
			t.Errorf("topicPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		topic string
		data  []Item
		typ   int
		on    bool
		known bool
	}{
		{"tns1:RuleEngine/CellMotionDetector/Motion", []Item{{"IsMotion", "true"}}, TypeMotion, true, true},
		{"tns1:VideoSource/MotionAlarm", []Item{{"State", "false"}}, TypeMotion, false, true},
		{"tns1:VideoAnalytics/MotionAlarm", []Item{{"State", "true"}}, TypeMotion, true, true},
		{"tns1:VideoAnalytics/tnssamsung:MotionDetection", []Item{{"State", "1"}}, TypeMotion, true, true},
		{"tns1:RuleEngine/tnsaxis:VMD3/vmd3_video_1", []Item{{"active", "1"}}, TypeMotion, true, true},
		{"tns1:RuleEngine/FieldDetector/ObjectsInside", []Item{{"IsInside", "true"}}, TypePresence, true, true},
		{"tns1:RuleEngine/LineDetector/Crossed", []Item{{"ObjectId", "1"}}, TypePresence, false, false},
		{"tns1:RuleEngine/CellMotionDetector/People", []Item{{"IsPeople", "true"}}, TypePresence, true, true},
		{"tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent", []Item{{"IsVehicle", "true"}}, TypePresence, true, true},
		{"tns1:RuleEngine/CellMotionDetector/TpSmartEvent", []Item{{"IsTamper", "false"}}, TypeCameraAlert, false, true},
		{"tns1:RuleEngine/MyRuleDetector/PeopleDetect", []Item{{"State", "true"}}, TypePresence, true, true},
		{"tns1:RuleEngine/TamperDetector/Tamper", []Item{{"IsTamper", "true"}}, TypeCameraAlert, true, true},
		{"tns1:VideoSource/tnsaxis:Tampering", []Item{{"tampering", "1"}}, TypeCameraAlert, true, true},
		{"tns1:VideoSource/GlobalSceneChange/AnalyticsService", []Item{{"State", "true"}}, TypeCameraAlert, true, true},
		{"tns1:VideoSource/ImageTooBlurry/ImagingService", []Item{{"State", "true"}}, TypeCameraAlert, true, true},
		{"tns1:VideoSource/SignalLoss", []Item{{"State", "true"}}, TypeCameraAlert, true, true},
		{"tns1:Device/Trigger/DigitalInput", []Item{{"LogicalState", "true"}}, TypePanic, true, true},
		{"tns1:Device/Trigger/tnshik:AlarmIn", []Item{{"State", "true"}}, TypePanic, true, true},
		{"tns1:Device/tns1:Trigger/tnssamsung:DigitalInput", []Item{{"Level", "false"}}, TypePanic, false, true},
		{"tns1:AudioAnalytics/Audio/DetectedSound", []Item{{"IsSoundDetected", "true"}}, TypeAnomaly, true, true},
		{"tns1:AudioSource/tnssamsung:AudioDetection", []Item{{"Audio", "true"}, {"State", "true"}}, TypeAnomaly, true, true},
		{"tnssamsung:IVA/LoiteringDetection", []Item{{"State", "1"}}, TypeAnomaly, true, true},
		{"tnsaxis:CameraApplicationPlatform/LoiteringGuard/Camera1ProfileANY", []Item{{"active", "1"}}, TypeAnomaly, true, true},
		{"tns1:Monitoring/ProcessorUsage", []Item{{"Value", "0.5"}}, 0, false, false},
		{"tns1:Device/HardwareFailure/StorageFailure", []Item{{"Failed", "true"}}, 0, false, false},
	}
	for _, tc := range tests {
		n := Notification{Topic: tc.topic, Path: topicPath(tc.topic), Data: tc.data}
		r, ok := Classify(n)
		if tc.typ == 0 {
			if ok {
				t.Errorf("%s: classified as %+v, want none", tc.topic, r)
			}
			continue
		}
		if !ok || r.Type != tc.typ {
			t.Errorf("%s: %+v %v, want type %d", tc.topic, r, ok, tc.typ)
			continue
		}
		on, known := State(r, n)
		if on != tc.on || known != tc.known {
			t.Errorf("%s: state %v/%v, want %v/%v", tc.topic, on, known, tc.on, tc.known)
		}
	}
}

func note(topic, op, value string) Notification {
	return Notification{Topic: topic, Path: topicPath(topic), Operation: op,
		Source: []Item{{"VideoSourceConfigurationToken", "vs1"}}, Data: []Item{{"State", value}}}
}

func TestJoiner(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const motion = "tns1:VideoSource/MotionAlarm"
	const input = "tns1:Device/Trigger/DigitalInput"
	t.Run("start and end", func(t *testing.T) {
		var j Joiner
		if ev := j.Add(note(motion, OpChanged, "true"), at(0)); ev != nil {
			t.Fatalf("start made %v", ev)
		}
		j.Add(note(motion, OpChanged, "true"), at(1)) // repeated start
		ev := j.Add(note(motion, OpChanged, "false"), at(4))
		if len(ev) != 1 || ev[0].Type != TypeMotion || !ev[0].Start.Equal(at(0)) || ev[0].Duration() != 4*time.Second {
			t.Fatalf("events %+v", ev)
		}
		if ev := j.Add(note(motion, OpChanged, "false"), at(5)); ev != nil {
			t.Fatalf("end without start made %v", ev)
		}
	})
	t.Run("sources apart", func(t *testing.T) {
		var j Joiner
		a, b := note(motion, OpChanged, "true"), note(motion, OpChanged, "true")
		b.Source = []Item{{"VideoSourceConfigurationToken", "vs2"}}
		j.Add(a, at(0))
		j.Add(b, at(1))
		b.Data = []Item{{"State", "false"}}
		ev := j.Add(b, at(3))
		if len(ev) != 1 || ev[0].Duration() != 2*time.Second || j.Active() != 1 {
			t.Fatalf("events %+v, active %d", ev, j.Active())
		}
	})
	t.Run("initialized is no new event", func(t *testing.T) {
		var j Joiner
		if ev := j.Add(note(input, OpInitialized, "false"), at(0)); ev != nil {
			t.Fatalf("initialized false made %v", ev)
		}
		if ev := j.Add(note(input, OpInitialized, "true"), at(0)); ev != nil {
			t.Fatalf("initialized true made %v", ev)
		}
		// A second subscription replays the same state: still one event.
		j.Add(note(input, OpInitialized, "true"), at(30))
		ev := j.Add(note(input, OpChanged, "false"), at(40))
		if len(ev) != 1 || !ev[0].Start.Equal(at(0)) || ev[0].Type != TypePanic {
			t.Fatalf("events %+v", ev)
		}
		// Not cut by MaxDuration: a state that was on at subscription.
		j.Add(note(input, OpInitialized, "true"), at(50))
		if ev := j.Expire(at(50 + 3600)); ev != nil {
			t.Fatalf("replayed state cut: %v", ev)
		}
	})
	t.Run("initialized false ends a lost end", func(t *testing.T) {
		var j Joiner
		j.Add(note(motion, OpChanged, "true"), at(0))
		ev := j.Add(note(motion, OpInitialized, "false"), at(9))
		if len(ev) != 1 || ev[0].Duration() != 9*time.Second {
			t.Fatalf("events %+v", ev)
		}
	})
	t.Run("instant", func(t *testing.T) {
		var j Joiner
		n := Notification{Path: "RuleEngine/LineDetector/Crossed", Data: []Item{{"ObjectId", "3"}}}
		n.Operation = OpInitialized
		if ev := j.Add(n, at(0)); ev != nil {
			t.Fatalf("initialized crossing made %v", ev)
		}
		n.Operation = OpChanged
		if ev := j.Add(n, at(1)); len(ev) != 1 || ev[0].Duration() != 0 || ev[0].Type != TypePresence {
			t.Fatalf("events %+v", ev)
		}
	})
	t.Run("max duration", func(t *testing.T) {
		j := Joiner{MaxDuration: time.Minute}
		j.Add(note(motion, OpChanged, "true"), at(0))
		if ev := j.Expire(at(59)); ev != nil {
			t.Fatalf("cut early: %v", ev)
		}
		ev := j.Expire(at(60))
		if len(ev) != 1 || ev[0].Duration() != time.Minute {
			t.Fatalf("events %+v", ev)
		}
		ev = j.Add(note(motion, OpChanged, "false"), at(70))
		if len(ev) != 1 || !ev[0].Start.Equal(at(60)) {
			t.Fatalf("continuation %+v", ev)
		}
	})
	t.Run("id", func(t *testing.T) {
		e := Event{Topic: "VideoSource/MotionAlarm", Source: "a=b", Start: at(0)}
		again := Event{Type: TypeMotion, Topic: "VideoSource/MotionAlarm", Source: "a=b", Start: at(0), End: at(9)}
		if again.ID("cam-1") != e.ID("cam-1") || e.ID("cam-1") == e.ID("cam-2") || !strings.HasPrefix(e.ID("cam-1"), "o1772359200000-") {
			t.Fatalf("id %s", e.ID("cam-1"))
		}
	})
}
