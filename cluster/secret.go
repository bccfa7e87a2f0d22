package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/sign"
)

// fingerprintPurpose derives the key whose hash is published as the
// secret's fingerprint; that key signs and seals nothing.
const fingerprintPurpose sign.Purpose = "cluster fingerprint"

// SecretFingerprint returns the published fingerprint of secret: 128 bits
// of the SHA-256 of a key derived from it for nothing else, in hex. It
// tells whether two nodes share a secret and reveals nothing of it.
func SecretFingerprint(secret []byte) string {
	h := sha256.Sum256(sign.Derive(secret, fingerprintPurpose))
	return hex.EncodeToString(h[:16])
}

// ErrSecretMismatch is returned by CheckSecret to a node whose
// security.secret is not the cluster's.
var ErrSecretMismatch = errors.New("security.secret differs from the cluster's")

// CheckSecret compares the fingerprint of node's secret (and of its
// previous secret during a rotation) with the cluster's record in facts
// (the bucket bus.BucketCluster, key bus.KeySecretFingerprint), writing
// the record when there is none or when node is ahead in a rotation. A
// node that shares neither secret with the record gets ErrSecretMismatch,
// in one line naming both fingerprints and the node that wrote the
// record. A node checks it before it joins.
func CheckSecret(ctx context.Context, facts Bucket, node string, secret, previous []byte) error {
	const key = bus.KeySecretFingerprint
	mine := bus.SecretFingerprint{Current: SecretFingerprint(secret), Node: node}
	if len(previous) > 0 {
		mine.Previous = SecretFingerprint(previous)
	}
	for range 5 {
		mine.At = time.Now().UTC()
		val, err := json.Marshal(mine)
		if err != nil {
			return err
		}
		e, err := facts.Get(ctx, key)
		if errors.Is(err, ErrNotFound) {
			if _, err = facts.Create(ctx, key, val); errors.Is(err, ErrWrongRevision) {
				continue
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("check security.secret against the cluster: %w", err)
		}
		var rec bus.SecretFingerprint
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return fmt.Errorf("check security.secret against the cluster: %s/%s: %w", bus.BucketCluster, key, err)
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
		if _, err = facts.Update(ctx, key, val, e.Rev); errors.Is(err, ErrWrongRevision) {
			continue
		}
		return err
	}
	return fmt.Errorf("check security.secret against the cluster: %s/%s keeps changing", bus.BucketCluster, key)
}
