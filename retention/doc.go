// Package retention keeps each camera's objects for the camera's
// history_days and no longer.
//
// Two mechanisms work together. Where the store supports lifecycle rules
// (S3, MinIO), the Sweeper installs one expiry rule per history_days value
// in use, matching the object tag storage.TagRetentionDays that writers put
// on camera objects, so the service itself expires them. Everywhere (fs, S3
// without lifecycle, and S3 with it, to catch plan changes and untagged
// objects) the Sweeper deletes expired objects by whole hour or day prefixes
// of the key layout, never listing every object of the bucket. One node of
// a cluster sweeps at a time, holding a Lease.
//
// See docs/retention.md for the rounding rule and the guarantees.
package retention
