// Package bus is Vigia's connection to NATS: the subjects, JetStream streams and
// key-value buckets of docs/nats.md, an embedded nats-server for single-process
// deployments and tests, and an Outbox that keeps publishes queued while NATS is
// unreachable.
//
// Only bus and cluster import the NATS libraries; other packages receive a *Bus
// or a function field from the wiring in package app.
package bus
