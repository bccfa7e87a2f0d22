package bus

import "time"

// BucketCluster holds facts every node of the cluster must agree on.
const BucketCluster = "cluster"

// KeySecretFingerprint is BucketCluster's key of the SecretFingerprint.
const KeySecretFingerprint = "secret_fingerprint"

// SecretFingerprint is the cluster's record of its shared secret: the
// fingerprints (never the secret, nor a key used for anything else) of
// the current secret and, during a rotation, of the previous one.
type SecretFingerprint struct {
	// Current is the fingerprint of security.secret.
	Current string `json:"current"`
	// Previous is the fingerprint of security.previous_secret, empty
	// outside a rotation.
	Previous string `json:"previous,omitempty"`
	// Node wrote the record, at At.
	Node string    `json:"node"`
	At   time.Time `json:"at"`
}
