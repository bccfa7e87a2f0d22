// Package stream is the contract between a camera's pipeline and the
// readers of its media (live streams, thumbnails, motion detection, the
// audio stage): Consumer and Stage, with their factories, and Queue, the
// bounded queue through which a reader that can be slow takes units
// without ever blocking the camera. Readers import stream, never the
// recorder that feeds them.
package stream
