package onvif

import (
	"fmt"
	"strings"
)

// Namespaces used in requests.
const (
	nsSOAP   = "http://www.w3.org/2003/05/soap-envelope"
	nsWSSE   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsWSU    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	nsWSA    = "http://www.w3.org/2005/08/addressing"
	nsDevice = "http://www.onvif.org/ver10/device/wsdl"
	nsMedia  = "http://www.onvif.org/ver10/media/wsdl"
	nsMedia2 = "http://www.onvif.org/ver20/media/wsdl"
	nsEvents = "http://www.onvif.org/ver10/events/wsdl"
	nsSchema = "http://www.onvif.org/ver10/schema"
	nsWSNT   = "http://docs.oasis-open.org/wsn/b-2"
)

// Envelope is a parsed SOAP envelope.
type Envelope struct {
	// Header and Body are the envelope's children (Header may be nil).
	Header, Body *Node
}

// ParseEnvelope parses a SOAP 1.1 or 1.2 envelope (matched by local names).
// A Fault in the body is returned as a *Fault error, with the envelope.
func ParseEnvelope(data []byte) (*Envelope, error) {
	root, err := parseXML(data)
	if err != nil {
		return nil, err
	}
	if root.Name != "Envelope" {
		return nil, fmt.Errorf("%w: root element %q, not Envelope", ErrMalformed, root.Name)
	}
	env := &Envelope{Header: root.Child("Header"), Body: root.Child("Body")}
	if env.Body == nil {
		return nil, fmt.Errorf("%w: no Body", ErrMalformed)
	}
	if f := env.Body.Child("Fault"); f != nil {
		return env, parseFault(f)
	}
	return env, nil
}

// parseFault reads a SOAP 1.2 fault (Code/Value, Code/Subcode/Value,
// Reason/Text) or a SOAP 1.1 one (faultcode, faultstring).
func parseFault(f *Node) *Fault {
	out := &Fault{
		Code:    localPart(f.Path("Code", "Value").Value()),
		Subcode: localPart(f.Path("Code", "Subcode", "Value").Value()),
		Reason:  f.Path("Reason", "Text").Value(),
	}
	if out.Code == "" {
		out.Code = localPart(f.Child("faultcode").Value())
		out.Reason = f.Child("faultstring").Value()
	}
	return out
}

// localPart strips a namespace prefix: "ter:NotAuthorized" → "NotAuthorized".
func localPart(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// First returns the body's first element (the operation's response).
func (e *Envelope) First() *Node {
	if e == nil || e.Body == nil || len(e.Body.Children) == 0 {
		return nil
	}
	return e.Body.Children[0]
}

// xmlEscape escapes s for element text or attribute values.
func xmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// buildEnvelope wraps body (one element, namespaces declared) in a SOAP 1.2
// envelope; header is inserted verbatim into the Header.
func buildEnvelope(header, body string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>`)
	b.WriteString(`<s:Envelope xmlns:s="` + nsSOAP + `" xmlns:a="` + nsWSA + `">`)
	if header != "" {
		b.WriteString("<s:Header>" + header + "</s:Header>")
	}
	b.WriteString("<s:Body>" + body + "</s:Body></s:Envelope>")
	return []byte(b.String())
}
