package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/sign"
)

// loadSecret returns the configured secret, or the one kept under dataDir,
// generating it on first use.
func loadSecret(configured, dataDir string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	path := filepath.Join(dataDir, "secret")
	b, err := os.ReadFile(path)
	if err == nil {
		s := strings.TrimSpace(string(b))
		if len(s) >= 32 {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("secret file %s is too short", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read secret: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	s := hex.EncodeToString(raw)
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write secret: %w", err)
	}
	return []byte(s), nil
}

// loadKeys returns the current secret (loadSecret) and the keys derived
// from it, with the previous secret of a rotation when one is configured.
func loadKeys(sec config.SecurityConfig, dataDir string) ([]byte, *sign.Keys, error) {
	secret, err := loadSecret(sec.Secret, dataDir)
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
