// Package motion detects motion in a camera's video, cheaply: it decodes
// nothing while the scene is still (docs/events.md).
//
//  1. Trigger, in the compressed domain: the sizes of the non-key frames
//     are compared with a rolling per-camera baseline (median and spread
//     of the last ten seconds of quiet video). A moving object makes the
//     encoder spend more bits; noise and a still scene do not.
//  2. Confirmation, only while triggered: the stream is decoded from the
//     last keyframe, a low-resolution luma picture is taken five times a
//     second and compared with a background; after compensating a global
//     gain and offset (lighting), the share of changed pixels must pass a
//     threshold. No unit is kept past its Unit call: the frames decoded
//     are read back from the spool file where the segmenter stored them.
//  3. An event opens at the first confirmed picture and closes when no
//     motion has been confirmed for a hold time; events shorter than the
//     minimum duration are dropped, longer than the maximum are split.
//
// All times are the media's own (the units' wall-clock Time), never the
// clock of the machine, so media can be fed faster than real time.
package motion
