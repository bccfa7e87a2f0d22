package onvif

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"time"
)

// usernameToken returns a WS-Security header with a UsernameToken whose
// password is the digest Base64(SHA-1(nonce + created + password)), as the
// ONVIF core specification (5.12) asks. created is the camera's time
// (local time plus the offset measured by GetSystemDateAndTime).
func usernameToken(user, password string, nonce []byte, created time.Time) string {
	c := created.UTC().Format("2006-01-02T15:04:05.000Z")
	h := sha1.New()
	h.Write(nonce)
	h.Write([]byte(c))
	h.Write([]byte(password))
	digest := base64.StdEncoding.EncodeToString(h.Sum(nil))
	return `<wsse:Security s:mustUnderstand="1" xmlns:wsse="` + nsWSSE + `" xmlns:wsu="` + nsWSU + `">` +
		`<wsse:UsernameToken><wsse:Username>` + xmlEscape(user) + `</wsse:Username>` +
		`<wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">` + digest + `</wsse:Password>` +
		`<wsse:Nonce EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">` + base64.StdEncoding.EncodeToString(nonce) + `</wsse:Nonce>` +
		`<wsu:Created>` + c + `</wsu:Created></wsse:UsernameToken></wsse:Security>`
}

// VerifyUsernameToken checks a UsernameToken found in a request header
// against password: it recomputes the digest from the nonce and created
// time. It is what a camera does; the fake camera of the tests uses it.
func VerifyUsernameToken(header *Node, user, password string) bool {
	tok := header.Find("UsernameToken")
	if tok == nil || tok.Child("Username").Value() != user {
		return false
	}
	nonce, err := base64.StdEncoding.DecodeString(tok.Child("Nonce").Value())
	if err != nil {
		return false
	}
	created := tok.Child("Created").Value()
	h := sha1.New()
	h.Write(nonce)
	h.Write([]byte(created))
	h.Write([]byte(password))
	want := base64.StdEncoding.EncodeToString(h.Sum(nil))
	return subtle.ConstantTimeCompare([]byte(want), []byte(tok.Child("Password").Value())) == 1
}
