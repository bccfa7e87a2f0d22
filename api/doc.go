// Package api is the HTTP interface of the camera monitoring service
// (docs/api.md): clients, users and tokens, camera registration, camera
// listings with status, recordings, thumbnails, live URLs, snapshots,
// downloadable videos, events and the embeddable player route, over the
// database (package api/db), the NATS camera registry and the object store.
//
// The package declares the narrow interfaces it needs (Registry,
// StatusReader, LiveURLs, Snapshotter, SnapshotFinder, Exporter);
// the wiring in package app implements them.
package api
