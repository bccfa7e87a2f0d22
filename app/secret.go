package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/sign"
)

// ErrSecretRequired is returned by a node that must be given
// security.secret and was not (a recorder: every node of a cluster must
// share one, so it never makes its own).
var ErrSecretRequired = errors.New("security.secret is required: every node of a cluster must be given the same secret (docs/security.md); only vigia serve generates one")

// loadSecret returns the configured secret, or, when generate is set, the
// one kept under dataDir, generating it on first use.
func loadSecret(configured, dataDir string, generate bool) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	if !generate {
		return nil, ErrSecretRequired
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
func loadKeys(sec config.SecurityConfig, dataDir string, generate bool) ([]byte, *sign.Keys, error) {
	secret, err := loadSecret(sec.Secret, dataDir, generate)
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

// fingerprintPurpose derives the key whose hash is published as the
// secret's fingerprint; that key signs and seals nothing.
const fingerprintPurpose sign.Purpose = "cluster fingerprint"

// secretFingerprint returns the published fingerprint of secret: 128 bits
// of the SHA-256 of a key derived from it for nothing else, in hex. It
// tells whether two nodes share a secret and reveals nothing of it.
func secretFingerprint(secret []byte) string {
	h := sha256.Sum256(sign.Derive(secret, fingerprintPurpose))
	return hex.EncodeToString(h[:16])
}

// fingerprintStore is where the cluster's secret fingerprint is kept.
type fingerprintStore interface {
	KVGet(ctx context.Context, bucket, key string) ([]byte, uint64, error)
	KVCreate(ctx context.Context, bucket, key string, value []byte) (uint64, error)
	KVUpdate(ctx context.Context, bucket, key string, value []byte, rev uint64) (uint64, error)
}

// ErrSecretMismatch is returned by a node whose security.secret is not the
// cluster's.
var ErrSecretMismatch = errors.New("security.secret differs from the cluster's")

// checkClusterSecret compares the fingerprint of this node's secret (and
// of its previous secret during a rotation) with the cluster's record in
// NATS, writing the record when there is none or when this node is ahead
// in a rotation. A node that shares neither secret with the record gets
// ErrSecretMismatch, in one line naming both fingerprints and the node
// that wrote the record.
func checkClusterSecret(ctx context.Context, st fingerprintStore, node string, secret, previous []byte) error {
	mine := bus.SecretFingerprint{Current: secretFingerprint(secret), Node: node}
	if len(previous) > 0 {
		mine.Previous = secretFingerprint(previous)
	}
	for range 5 {
		mine.At = time.Now().UTC()
		val, err := json.Marshal(mine)
		if err != nil {
			return err
		}
		raw, rev, err := st.KVGet(ctx, bus.BucketCluster, bus.KeySecretFingerprint)
		if errors.Is(err, bus.ErrKeyNotFound) {
			if _, err = st.KVCreate(ctx, bus.BucketCluster, bus.KeySecretFingerprint, val); errors.Is(err, bus.ErrRevision) {
				continue
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("check security.secret against the cluster: %w", err)
		}
		var rec bus.SecretFingerprint
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("check security.secret against the cluster: %s/%s: %w", bus.BucketCluster, bus.KeySecretFingerprint, err)
		}
		var write bool
		switch {
		case mine.Current == rec.Current:
			// Same secret; a node that ended its rotation ends the
			// cluster's, so that nodes left on the old secret are refused.
			write = mine.Previous == "" && rec.Previous != ""
		case mine.Previous != "" && mine.Previous == rec.Current:
			write = true // the first node of a rotation
		case rec.Previous != "" && mine.Current == rec.Previous:
			// A node not yet rotated, in a cluster that is rotating.
		default:
			return fmt.Errorf("%w: this node's fingerprint is %s, the cluster's is %s (written by node %q at %s); give every node the same security.secret, or rotate it with security.previous_secret (docs/security.md)",
				ErrSecretMismatch, mine.Current, rec.Current, rec.Node, rec.At.Format(time.RFC3339))
		}
		if !write {
			return nil
		}
		if _, err = st.KVUpdate(ctx, bus.BucketCluster, bus.KeySecretFingerprint, val, rev); errors.Is(err, bus.ErrRevision) {
			continue
		}
		return err
	}
	return fmt.Errorf("check security.secret against the cluster: %s/%s keeps changing", bus.BucketCluster, bus.KeySecretFingerprint)
}
