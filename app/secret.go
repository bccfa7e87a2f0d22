package app

import (
	"fmt"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/sign"
)

// loadKeys returns the current secret (sign.LoadSecret: generated under
// dataDir when generate is set) and the keys derived from it, with the
// previous secret of a rotation when one is configured.
func loadKeys(sec config.SecurityConfig, dataDir string, generate bool) ([]byte, *sign.Keys, error) {
	secret, err := sign.LoadSecret(sec.Secret, dataDir, generate)
	if err != nil {
		return nil, nil, err
	}
	keys, err := sign.New(secret)
	if err != nil {
		return nil, nil, fmt.Errorf("security.secret: %w", err)
	}
	if sec.PreviousSecret != "" {
		if keys, err = keys.WithPrevious([]byte(sec.PreviousSecret), sec.PreviousUntil.Time()); err != nil {
			return nil, nil, fmt.Errorf("security.previous_secret: %w", err)
		}
	}
	return secret, keys, nil
}
