package api

import (
	"net/http/httptest"
	"testing"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/camera/cameratest"
)

// TestCameraIDRule: a camera id in the path is either refused or taken as
// a positive integer whose decimal form, the id the API hands to the
// registry, storage and NATS, is one the camera id rule accepts and in the
// API's id space. An id the rule refuses is never handed on as written.
func TestCameraIDRule(t *testing.T) {
	for _, tc := range cameratest.IDCases() {
		t.Run(tc.Name, func(t *testing.T) {
			if valid := camera.ValidID(tc.ID) == nil; valid != tc.Valid {
				t.Fatalf("camera.ValidID(%q) valid = %v, the case says %v", tc.ID, valid, tc.Valid)
			}
			r := httptest.NewRequest("GET", "/api/camera/x/player", nil)
			r.SetPathValue("id", tc.ID)
			n, err := pathID(r, "id")
			if err != nil {
				return
			}
			id := camID(n)
			if err := camera.ValidID(id); err != nil || !camera.IsAPIID(id) {
				t.Fatalf("path id %q taken as %q: %v, API id %v", tc.ID, id, err, camera.IsAPIID(id))
			}
			if r.PathValue("id") != id {
				t.Fatalf("path value %q after the check, want %q", r.PathValue("id"), id)
			}
			if !tc.Valid && id == tc.ID {
				t.Fatalf("path id %q refused by the rule was handed on as is", tc.ID)
			}
		})
	}
}
