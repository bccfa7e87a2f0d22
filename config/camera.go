package config

// Camera is a static camera of the cameras list.
type Camera struct {
	ID          string `yaml:"id" doc:"Camera id: 1 to 64 characters of A-Z, a-z, 0-9, _ and -, not digits only (decimal ids are those of API cameras); unique."`
	URL         string `yaml:"url" secret:"url" doc:"Stream URL: rtsp, rtsps, rtmp or rtmps (pulled), with credentials in the user information; rtmp-push: for a camera that publishes to this node (docs/rtmp.md); p2p://[user]:{password}@{serial}/{stream} for a P2P camera (docs/p2p.md); onvif://user:password@host[:port][?stream=0|1] for a camera asked for its RTSP URL over ONVIF (docs/onvif.md)."`
	Transport   string `yaml:"transport" doc:"RTSP transport: tcp, udp or auto. Empty uses ingest.default_transport."`
	Sound       int    `yaml:"sound" default:"0" doc:"1 records the camera's audio as AAC (G.711 and Opus are transcoded), 0 does not."`
	HistoryDays int    `yaml:"history_days" default:"7" doc:"Days recordings are kept."`
}
