// Package export cuts recordings into downloadable videos: one progressive
// MP4 file (moov before mdat, so it plays while downloading) remuxed from the
// stored fMP4 segments, H.264/H.265 and AAC as recorded, never transcoded.
//
// Build reads the segments covering a time range from storage and produces
// a Clip; Service runs export jobs from the NATS work queue
// vigia.jobs.export, keeps their state in the KV bucket "exports" and stores
// each file under videos/{id}.mp4. See docs/export.md.
package export
