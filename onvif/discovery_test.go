package onvif

import (
	"reflect"
	"testing"
)

const probeMatchesHik = `<?xml version="1.0" encoding="UTF-8"?>
<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:wsadis="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:dn="http://www.onvif.org/ver10/network/wsdl">
<env:Header><wsadis:MessageID>urn:uuid:a1</wsadis:MessageID><wsadis:RelatesTo>urn:uuid:probe-1</wsadis:RelatesTo>
<wsadis:To>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</wsadis:To>
<wsadis:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches</wsadis:Action></env:Header>
<env:Body><d:ProbeMatches><d:ProbeMatch><wsadis:EndpointReference><wsadis:Address>urn:uuid:54419b6e-0000-1000-8000-4419b6000001</wsadis:Address></wsadis:EndpointReference>
<d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types>
<d:Scopes>onvif://www.onvif.org/type/video_encoder onvif://www.onvif.org/Profile/Streaming onvif://www.onvif.org/hardware/DS-2CD2143G2-I onvif://www.onvif.org/name/HIKVISION%20DS-2CD2143G2-I onvif://www.onvif.org/location/city/hangzhou</d:Scopes>
<d:XAddrs>http://192.168.1.64/onvif/device_service http://[fe80::4619:b6ff:fe00:1]/onvif/device_service</d:XAddrs>
<d:MetadataVersion>10</d:MetadataVersion></d:ProbeMatch></d:ProbeMatches></env:Body></env:Envelope>`

func TestParseProbeMatches(t *testing.T) {
	for _, tt := range []struct {
		name     string
		data     string
		relates  string
		want     []ProbeMatch
		model    string
		bad      bool
		nomatchs bool
	}{
		{name: "hikvision", data: probeMatchesHik, relates: "urn:uuid:probe-1", model: "DS-2CD2143G2-I", want: []ProbeMatch{{
			Endpoint: "urn:uuid:54419b6e-0000-1000-8000-4419b6000001",
			Types:    []string{"NetworkVideoTransmitter", "Device"},
			Scopes: []string{"onvif://www.onvif.org/type/video_encoder", "onvif://www.onvif.org/Profile/Streaming",
				"onvif://www.onvif.org/hardware/DS-2CD2143G2-I", "onvif://www.onvif.org/name/HIKVISION%20DS-2CD2143G2-I",
				"onvif://www.onvif.org/location/city/hangzhou"},
			XAddrs: []string{"http://192.168.1.64/onvif/device_service", "http://[fe80::4619:b6ff:fe00:1]/onvif/device_service"},
		}}},
		{name: "any probe", data: probeMatchesHik, model: "DS-2CD2143G2-I", want: []ProbeMatch{{}}},
		{name: "another probe's answer", data: probeMatchesHik, relates: "urn:uuid:probe-2", bad: true},
		{name: "a probe, not an answer", data: string(ProbeMessage("urn:uuid:x")), bad: true},
		{name: "no xaddrs", data: `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><ProbeMatches><ProbeMatch><XAddrs>ftp://x/ y</XAddrs></ProbeMatch></ProbeMatches></s:Body></s:Envelope>`, nomatchs: true},
		{name: "not xml", data: "\x00\x01", bad: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProbeMatches([]byte(tt.data), tt.relates)
			if tt.bad {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.nomatchs {
				if len(got) != 0 {
					t.Fatalf("got %+v, want none", got)
				}
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d matches, want %d", len(got), len(tt.want))
			}
			if tt.want[0].Endpoint != "" && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			if m := got[0].Scope("hardware"); m != tt.model {
				t.Fatalf("model %q, want %q", m, tt.model)
			}
			if h := got[0].Host(); h != "192.168.1.64" {
				t.Fatalf("host %q", h)
			}
			if n := got[0].Scope("name"); n != "HIKVISION DS-2CD2143G2-I" {
				t.Fatalf("name %q", n)
			}
		})
	}
}

// TestProbeMessage: the probe is a SOAP envelope whose MessageID is the
// id given and whose body is a Probe for NetworkVideoTransmitters.
func TestProbeMessage(t *testing.T) {
	env, err := ParseEnvelope(ProbeMessage("urn:uuid:p<1>"))
	if err != nil {
		t.Fatal(err)
	}
	if id := env.Header.Find("MessageID").Value(); id != "urn:uuid:p<1>" {
		t.Fatalf("MessageID %q", id)
	}
	if p := env.First(); p == nil || p.Name != "Probe" || p.Child("Types").Value() != "dp0:NetworkVideoTransmitter" {
		t.Fatalf("body %+v", p)
	}
}
