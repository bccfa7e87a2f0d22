package retention

// Add adds the counts of o to r: the report of two sweeps together.
func (r *Report) Add(o Report) {
	r.Cameras += o.Cameras
	r.Prefixes += o.Prefixes
	r.Objects += o.Objects
	r.QuotaSegments += o.QuotaSegments
	r.QuotaBytes += o.QuotaBytes
	r.Held += o.Held
}
