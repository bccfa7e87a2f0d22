package config

// APIConfig is the api section: the service's HTTP interface.
type APIConfig struct {
	BodyLimit            Size           `yaml:"body_limit" default:"1MiB" doc:"Largest request body the HTTP interface reads; a larger one is answered 413."`
	DigestGrace          Duration       `yaml:"digest_grace" default:"1h" doc:"How long after midnight (api.timezone) the previous day's digest, hash and player_digest stay valid."`
	Timezone             string         `yaml:"timezone" default:"UTC" doc:"IANA time zone of the dates the HTTP interface reads and writes (created_at, start_date, event_at, events' start_at and end_at)."`
	MaxVideoDuration     Duration       `yaml:"max_video_duration" default:"1h" doc:"Longest downloadable video (end_at - start_at)."`
	LoginAttempts        int            `yaml:"login_attempts" default:"5" doc:"Token requests allowed per client address within api.login_window, each counted when it starts (so parallel ones are counted before any password is checked) and given back when it succeeds; more are answered 429. The client address follows http.trusted_proxies."`
	LoginAccountAttempts int            `yaml:"login_account_attempts" default:"20" doc:"Failed token requests allowed per e-mail address, from all client addresses together, within api.login_window; more are answered 429 for that address only."`
	LoginWindow          Duration       `yaml:"login_window" default:"15m" doc:"Window of api.login_attempts."`
	RTMPURL              string         `yaml:"rtmp_url" doc:"Base of the rtmp_url handed to RTMP cameras (rtmp://host:port/app). Empty: the URL of the RTMP push server, rtmp://{rtmp.public_host or host of http.public_url}:{port rtmp.addr listens on}/live (1935 when that port is 0 and nothing listens)."`
	LPRBodyLimit         Size           `yaml:"lpr_body_limit" default:"4MiB" doc:"Largest plate read a camera may push to its lpr_url, pictures included; a larger one is answered 413 (docs/events.md)."`
	LPRRate              float64        `yaml:"lpr_rate" default:"5" doc:"Plate reads per second one camera may push on average; more are answered 429 with Retry-After."`
	LPRBurst             int            `yaml:"lpr_burst" default:"20" doc:"Plate reads one camera may push at once before api.lpr_rate applies."`
	ViewerRate           float64        `yaml:"viewer_rate" default:"10" doc:"Listing, timeline and playlist requests per second one viewer (a user; an address for the operator's player links) may make on average; more are answered 429 with Retry-After (docs/security.md, Readers' cost). The operator token is not limited."`
	ViewerBurst          int            `yaml:"viewer_burst" default:"60" doc:"Listing, timeline and playlist requests one viewer may make at once before api.viewer_rate applies."`
	MaxTimelineRange     Duration       `yaml:"max_timeline_range" default:"168h" doc:"Longest range of one player timeline request; a longer one is answered 400. The player's widest window is 7 days."`
	MaxPlaylistRange     Duration       `yaml:"max_playlist_range" default:"24h" doc:"Longest range of one recorded playlist (vod.m3u8); a longer one is answered 400. The player asks for about 2 hours."`
	ListingCache         int            `yaml:"listing_cache" default:"200000" doc:"Past hours' recording listings the API keeps for timelines, playlists and recordings, counted in listings plus their segments and gap records (about 25 MB by default); 0 keeps none."`
	ListingCacheTTL      Duration       `yaml:"listing_cache_ttl" default:"5m" doc:"How long a kept listing of a past hour is used: a segment uploaded late into a past hour, or one deleted by retention, shows in timelines, playlists and recordings at most this late."`
	HistoryDays          string         `yaml:"history_days" default:"1,3,7,15,30,60,90" doc:"Comma-separated history_days values offered by the camera creation info."`
	Manufacturers        []Manufacturer `yaml:"manufacturers,omitempty" doc:"Camera manufacturers of the creation info. Empty uses the built-in list (docs/api.md). Set in the file only."`
	CameraModels         []CameraModel  `yaml:"camera_models,omitempty" doc:"Camera models of the creation info. Empty uses the built-in list (docs/api.md). Set in the file only."`
	Resolutions          []Resolution   `yaml:"resolutions,omitempty" doc:"Plan resolutions of the creation info. Empty uses the built-in list (docs/api.md). Set in the file only."`
}

// Manufacturer is a camera manufacturer of the creation info.
type Manufacturer struct {
	ID   int    `yaml:"id" doc:"Manufacturer id, 1 or more; unique."`
	Name string `yaml:"name" doc:"Manufacturer name."`
}

// CameraModel is a camera model of the creation info.
type CameraModel struct {
	ID             int    `yaml:"id" doc:"Model id (the model_id of cameras), 1 or more; unique."`
	Name           string `yaml:"name" doc:"Model name."`
	ManufacturerID int    `yaml:"manufacturer_id" doc:"Id of the model's manufacturer."`
	RTSPPath       string `yaml:"rtsp_path" doc:"Path and query of the model's RTSP URL; {channel}, {stream} (0 or 1) and {stream1} (1 or 2) are replaced. onvif: the camera is asked for it (ONVIF GetStreamUri; port is then the camera's ONVIF HTTP port; docs/onvif.md)."`
}

// Resolution is a plan resolution of the creation info.
type Resolution struct {
	ID     int    `yaml:"id" doc:"Resolution id (the resolution_id of cameras), 1 or more; unique."`
	Name   string `yaml:"name" doc:"Resolution name shown in the plan."`
	Width  int    `yaml:"width" doc:"Largest width of the plan, pixels; 0 for no limit."`
	Height int    `yaml:"height" doc:"Largest height of the plan, pixels; 0 for no limit."`
}
