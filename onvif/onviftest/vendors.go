package onviftest

// Auth is how a fake camera authenticates requests.
type Auth int

// Authentication modes.
const (
	// AuthUsernameToken requires a WS-Security UsernameToken digest whose
	// Created time is within 5 seconds of the camera's clock (the ONVIF
	// default; HTTP digest is accepted too).
	AuthUsernameToken Auth = iota
	// AuthDigest requires HTTP digest authentication (401 challenge) on
	// every request but GetSystemDateAndTime.
	AuthDigest
	// AuthNone accepts every request.
	AuthNone
)

// Vendor describes one camera family: its fixture directory and quirks.
type Vendor struct {
	// Name is the fixture directory under testdata.
	Name string
	// Model is the model the camera gives in its WS-Discovery hardware
	// scope (escaped as a URI path: GetDeviceInformation's Model).
	Model string
	// Auth is the authentication the camera requires.
	Auth Auth
	// SingleEndpoint answers every service on the device address and
	// refuses GetServices (Tapo).
	SingleEndpoint bool
	// StrictAddressing refuses subscription requests without WS-Addressing
	// Action and To headers (Reolink).
	StrictAddressing bool
	// ReferenceParameters hands out a subscription reference whose
	// ReferenceParameters must come back as headers (Axis, Bosch).
	ReferenceParameters bool
	// Kinds are the alarm kinds the fixtures have notifications for
	// (testdata/{Name}/notify/{kind}.xml).
	Kinds []string
}

// Vendors are the camera families the fixtures model.
var Vendors = []Vendor{
	{Name: "hikvision", Model: "DS-2CD2143G2-I", Kinds: []string{"motion", "tamper", "field", "line", "input", "sound"}},
	{Name: "axis", Model: "P3245-LVE", ReferenceParameters: true, Kinds: []string{"motion", "tamper", "input", "sound", "loitering"}},
	{Name: "dahua", Model: "IPC-HFW2431S-S-S2", Auth: AuthDigest, Kinds: []string{"motion", "tamper", "field", "input", "sound", "videoloss"}},
	{Name: "bosch", Model: "FLEXIDOME%20IP%205000i", ReferenceParameters: true, Kinds: []string{"motion", "scene", "dark", "input"}},
	{Name: "hanwha", Model: "XNV-6080R", Kinds: []string{"motion", "tamper", "input", "sound", "loitering"}},
	{Name: "tapo", Model: "C200", SingleEndpoint: true, Kinds: []string{"motion", "people", "vehicle", "tamper", "line"}},
	{Name: "reolink", Model: "RLC-810A", StrictAddressing: true, Kinds: []string{"motion", "people", "vehicle"}},
}

// VendorByName returns the vendor named name.
func VendorByName(name string) (Vendor, bool) {
	for _, v := range Vendors {
		if v.Name == name {
			return v, true
		}
	}
	return Vendor{}, false
}
