package config

import (
	"strings"
	"testing"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/camera/cameratest"
)

// TestCameraIDRule: a static camera's id is accepted exactly when the
// camera id rule accepts it and it lies outside the API's id space
// (digits only).
func TestCameraIDRule(t *testing.T) {
	for _, tc := range cameratest.IDCases() {
		t.Run(tc.Name, func(t *testing.T) {
			valid := camera.ValidID(tc.ID) == nil
			if valid != tc.Valid {
				t.Fatalf("camera.ValidID(%q) valid = %v, the case says %v", tc.ID, valid, tc.Valid)
			}
			want := valid && !camera.IsAPIID(tc.ID)
			c := validConfig(t)
			c.Cameras[0].ID = tc.ID
			err := c.Validate()
			refused := err != nil && strings.Contains(err.Error(), "cameras[0].id")
			if refused == want {
				t.Fatalf("Validate with id %q = %v; want accepted %v", tc.ID, err, want)
			}
			if !refused && err != nil {
				t.Fatalf("Validate with id %q = %v", tc.ID, err)
			}
		})
	}
}
