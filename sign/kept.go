package sign

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrSecretRequired is returned by LoadSecret to a node that must be given
// security.secret and was not (a recorder: every node of a cluster must
// share one, so it never makes its own).
var ErrSecretRequired = errors.New("security.secret is required: every node of a cluster must be given the same secret (docs/security.md); only vigia serve generates one")

// SecretFile is the file under the data directory that keeps a generated
// secret.
const SecretFile = "secret"

// LoadSecret returns configured when set; else, when generate is set, the
// secret kept in dataDir's SecretFile (32 random bytes in hex, generated
// on first use); else ErrSecretRequired.
func LoadSecret(configured, dataDir string, generate bool) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	if !generate {
		return nil, ErrSecretRequired
	}
	s, _, err := Kept(filepath.Join(dataDir, SecretFile), "", 32)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return []byte(s), nil
}

// MinKept is the length under which a kept value is refused.
const MinKept = 32

// Kept returns the value kept in the file path; when there is none, it
// makes one, prefix followed by n random bytes in hex, writes it there
// (mode 0600, its directory made when missing) and returns it with made
// set. A kept value shorter than MinKept characters is an error.
func Kept(path, prefix string, n int) (value string, made bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		v := strings.TrimSpace(string(b))
		if len(v) < MinKept {
			return "", false, fmt.Errorf("file %s is too short", path)
		}
		return v, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	v := prefix + hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
		return "", false, err
	}
	return v, true, nil
}
