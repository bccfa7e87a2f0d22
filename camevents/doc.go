// Package camevents runs a camera's own ONVIF service on the node that
// records it: the RTSP address of an onvif:// camera (GetProfiles,
// GetStreamUri), and, while the camera is recorded, an event subscription
// (PullPoint, or push where configured) whose joined events go out through
// a hook with the node's newest keyframe as their image. It also decides,
// per camera, whether the camera's motion or the node's motion detector
// makes the motion events (docs/events.md).
//
// It imports the onvif client and the stream contract, never the recorder
// that feeds it; storage and publishing are hooks.
package camevents
