package onviftest

import (
	"crypto/rand"
	"fmt"
	"net"
	"sync"

	"github.com/vigia/vigia/onvif"
)

// Discovery answers WS-Discovery probes (multicast 239.255.255.250, UDP
// port 3702) for fake cameras, as cameras on a LAN do.
type Discovery struct {
	conn *net.UDPConn
	cams []*Camera
	wg   sync.WaitGroup

	mu     sync.Mutex
	probes int
}

// wsDiscoveryAddr is the WS-Discovery multicast group and port.
var wsDiscoveryAddr = &net.UDPAddr{IP: net.IPv4(239, 255, 255, 250), Port: 3702}

// StartDiscovery answers probes with the device addresses of cams until
// Close.
func StartDiscovery(cams ...*Camera) (*Discovery, error) {
	conn, err := net.ListenMulticastUDP("udp4", nil, wsDiscoveryAddr)
	if err != nil {
		return nil, err
	}
	return serveDiscovery(conn, cams), nil
}

// ListenDiscovery answers probes sent to the UDP address addr (unicast,
// as to one address of a range; "127.0.0.1:0" picks a port, see Addr)
// with the device addresses of cams until Close.
func ListenDiscovery(addr string, cams ...*Camera) (*Discovery, error) {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp4", ua)
	if err != nil {
		return nil, err
	}
	return serveDiscovery(conn, cams), nil
}

func serveDiscovery(conn *net.UDPConn, cams []*Camera) *Discovery {
	d := &Discovery{conn: conn, cams: cams}
	d.wg.Add(1)
	go d.serve()
	return d
}

// Addr is the address the responder listens on.
func (d *Discovery) Addr() *net.UDPAddr { return d.conn.LocalAddr().(*net.UDPAddr) }

// Probes is the number of probes answered.
func (d *Discovery) Probes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.probes
}

// Close stops answering and waits for the responder to end.
func (d *Discovery) Close() {
	_ = d.conn.Close()
	d.wg.Wait()
}

func (d *Discovery) serve() {
	defer d.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := d.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		env, err := onvif.ParseEnvelope(buf[:n])
		if err != nil || env.First() == nil || env.First().Name != "Probe" {
			continue
		}
		relates := env.Header.Find("MessageID").Value()
		d.mu.Lock()
		d.probes++
		d.mu.Unlock()
		for _, c := range d.cams {
			_, _ = d.conn.WriteToUDP([]byte(probeMatch(relates, c)), from)
		}
	}
}

func uuid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// probeMatch is the ProbeMatches answer for c.
func probeMatch(relates string, c *Camera) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` +
		`<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:wsdd="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:tdn="http://www.onvif.org/ver10/network/wsdl">` +
		`<SOAP-ENV:Header><wsa:MessageID>uuid:` + uuid() + `</wsa:MessageID><wsa:RelatesTo>` + relates + `</wsa:RelatesTo>` +
		`<wsa:To SOAP-ENV:mustUnderstand="true">http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</wsa:To>` +
		`<wsa:Action SOAP-ENV:mustUnderstand="true">http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches</wsa:Action></SOAP-ENV:Header>` +
		`<SOAP-ENV:Body><wsdd:ProbeMatches><wsdd:ProbeMatch><wsa:EndpointReference><wsa:Address>urn:uuid:` + uuid() + `</wsa:Address></wsa:EndpointReference>` +
		`<wsdd:Types>tdn:NetworkVideoTransmitter</wsdd:Types>` +
		`<wsdd:Scopes>onvif://www.onvif.org/type/video_encoder onvif://www.onvif.org/Profile/Streaming onvif://www.onvif.org/name/` + c.opts.Vendor.Name + ` onvif://www.onvif.org/hardware/` + c.opts.Vendor.Model + ` onvif://www.onvif.org/location/</wsdd:Scopes>` +
		`<wsdd:XAddrs>` + c.URL + `</wsdd:XAddrs><wsdd:MetadataVersion>1</wsdd:MetadataVersion></wsdd:ProbeMatch></wsdd:ProbeMatches></SOAP-ENV:Body></SOAP-ENV:Envelope>`
}
