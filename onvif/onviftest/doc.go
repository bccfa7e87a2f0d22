// Package onviftest is a fake ONVIF camera for tests: an HTTP server
// answering the device, media and events services from SOAP fixtures
// modelled on real cameras (testdata/README.md names the sources), one set
// per vendor, with the vendors' quirks (single endpoint, strict
// WS-Addressing, HTTP digest only, clock offsets).
//
// Tests change the camera's alarm states with Set; every open PullPoint
// subscription receives a Changed notification, and a new subscription
// first receives the current states as Initialized notifications, as
// cameras do.
package onviftest
