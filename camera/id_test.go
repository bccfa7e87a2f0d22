package camera_test

import (
	"errors"
	"testing"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/camera/cameratest"
)

// TestValidID: the rule accepts exactly the valid cases, and refusals
// wrap ErrInvalidID.
func TestValidID(t *testing.T) {
	for _, tc := range cameratest.IDCases() {
		t.Run(tc.Name, func(t *testing.T) {
			err := camera.ValidID(tc.ID)
			if tc.Valid && err != nil {
				t.Fatalf("ValidID(%q) = %v, want nil", tc.ID, err)
			}
			if !tc.Valid && !errors.Is(err, camera.ErrInvalidID) {
				t.Fatalf("ValidID(%q) = %v, want ErrInvalidID", tc.ID, err)
			}
		})
	}
}

// TestValidateUsesIDRule: a registry record is refused exactly when its id
// is.
func TestValidateUsesIDRule(t *testing.T) {
	for _, tc := range cameratest.IDCases() {
		t.Run(tc.Name, func(t *testing.T) {
			err := camera.Config{ID: tc.ID, ConnectionType: camera.RTMP}.Validate()
			if (err == nil) != tc.Valid {
				t.Fatalf("Validate of id %q = %v, want valid %v", tc.ID, err, tc.Valid)
			}
			if err != nil && (!errors.Is(err, camera.ErrInvalid) || !errors.Is(err, camera.ErrInvalidID)) {
				t.Fatalf("Validate of id %q = %v, want ErrInvalid and ErrInvalidID", tc.ID, err)
			}
		})
	}
}
