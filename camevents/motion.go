package camevents

import "github.com/vigia/vigia/onvif"

// The motion sources a camera may choose (the motion parameter of its
// onvif:// URL), so that one movement makes one motion event.
const (
	// MotionAuto uses the camera's motion once its subscription has
	// carried a motion topic, and the node's detector until then. It is
	// the default.
	MotionAuto = "auto"
	// MotionCamera uses the camera's motion only.
	MotionCamera = "camera"
	// MotionVigia uses the node's motion detector only; the camera's
	// motion notifications are dropped.
	MotionVigia = "vigia"
)

func validMotion(m string) bool {
	return m == MotionAuto || m == MotionCamera || m == MotionVigia
}

// motionType is the service's event type of motion.
const motionType = 5

// CameraMotion reports whether camera's motion events come from the camera
// itself, so the node's motion detector must publish none for it: the
// camera chose MotionCamera, or MotionAuto and its subscription has
// carried a motion topic (a replayed state counts) while it is recorded
// here.
func (w *Watcher) CameraMotion(camera string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.cams[camera]
	if !ok {
		return false
	}
	switch d.motion {
	case MotionCamera:
		return true
	case MotionVigia:
		return false
	}
	return w.motion[camera]
}

// VigiaMotion reports whether the node's motion detector should look at
// camera at all: not when the camera chose MotionCamera.
func (w *Watcher) VigiaMotion(camera string) bool {
	d, ok := w.device(camera)
	return !ok || d.motion != MotionCamera
}

// sawTopic notes that camera's subscription carries the topic of rule.
func (w *Watcher) sawTopic(camera string, rule onvif.TopicRule) {
	if rule.Type != motionType {
		return
	}
	w.mu.Lock()
	w.motion[camera] = true
	w.mu.Unlock()
}

// keepsEvent reports whether an event of camera of type typ is published:
// the camera's motion is dropped when the camera chose MotionVigia.
func (w *Watcher) keepsEvent(camera string, typ int) bool {
	if typ != motionType {
		return true
	}
	d, ok := w.device(camera)
	return !ok || d.motion != MotionVigia
}

// forget drops what the watcher learnt of camera's topics, when its
// subscription ends.
func (w *Watcher) forget(camera string) {
	w.mu.Lock()
	delete(w.motion, camera)
	w.mu.Unlock()
}
