package app

import (
	"go.uber.org/zap"
)

// synthAddrFile, under data_dir, keeps the address of the synthetic
// cameras' RTSP server (synth.StartKept).
const synthAddrFile = "synth_addr"

// logLocalTrial says at start that cameras on this machine and its
// networks are allowed, and which key turns that off.
func (a *App) logLocalTrial() {
	if !a.cfg.Ingest.AllowPrivateNetworks || !(a.mode.Recorder || a.mode.API) {
		return
	}
	a.log.Warn("cameras on loopback, private and link-local addresses are allowed (a local trial); "+
		"in production set ingest.allow_private_networks=false (VIGIA_INGEST_ALLOW_PRIVATE_NETWORKS=false)",
		zap.Bool("ingest.allow_private_networks", true))
}
