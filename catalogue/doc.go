// Package catalogue answers what a camera recorded and why anything is
// missing, from storage listings alone: the segments of a camera in a time
// range, the segment at a time, the gap records that say why recording
// stopped or skipped, a timeline of recorded spans and gaps by cause, and
// the share of time covered. Every reader of recordings (the API's
// recordings, the player's playlists and timeline, export, snapshots at a
// time, the node's page) goes through it.
//
// Keys are the source of truth (docs/storage.md): a camera's objects of an
// hour are one prefix listing, segments named
// {startMs}_{durMs}_{initSize}.mp4 and gap records
// {startMs}_{durMs}_{cause}.gap. A segment covering a time t starts at most
// MaxSegment before t (storage.MaxSegmentDuration of the configured
// segment duration), which bounds how far back a range looks. Init sizes,
// which playlists need, come from the keys; segments stored in the older
// form {startMs}_{durMs}.mp4 have theirs read with Stat once and kept in a
// bounded cache shared by every request.
//
// The Journal is the writing side: it stores gap records beside the
// segments and publishes them, retrying while storage is away.
package catalogue
