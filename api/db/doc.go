// Package db is the database of the service's HTTP interface: clients,
// users and their tokens, cameras, downloadable videos and events. It runs on
// SQLite (modernc.org/sqlite, no cgo) for a single node and on PostgreSQL
// (pgx) for a cluster of API nodes, with the same SQL and schema
// migrations applied by Open.
package db
