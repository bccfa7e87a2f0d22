package bench

import "github.com/vigia/vigia/synth"

// Report is the result of a run. Durations are in seconds or milliseconds
// and sizes in MiB, as their JSON names say.
type Report struct {
	// Machine is where the run took place.
	Machine Machine `json:"machine"`

	// Cameras, Codec, Audio, AudioCodec, Backend and SegmentS are the
	// run's settings.
	Cameras    int     `json:"cameras"`
	Codec      string  `json:"codec"`
	Audio      bool    `json:"audio"`
	AudioCodec string  `json:"audio_codec,omitempty"`
	Backend    string  `json:"backend"`
	SegmentS   float64 `json:"segment_s"`

	// WarmupS is the warm-up before the window; WindowS the measured window
	// as it actually lasted.
	WarmupS float64 `json:"warmup_s"`
	WindowS float64 `json:"window_s"`

	// Vigia is the recorder process (this one).
	Vigia Usage `json:"vigia"`

	// Synth is the process serving the synthetic cameras, for information.
	Synth Usage `json:"synth"`

	// Fleet holds the counters of the lean fleet (Options.Fleet) at the
	// end of the window, nil for the other cameras.
	Fleet *synth.FleetStats `json:"fleet,omitempty"`

	// Storage is the MinIO process of the s3 backend, nil for fs.
	Storage *Usage `json:"storage,omitempty"`

	// NATS is the NATS process with --nats-process, nil when NATS runs
	// embedded in the recorder (and is counted in Vigia).
	NATS *Usage `json:"nats,omitempty"`

	// MachineCPU is the whole machine's CPU over the window, nil when it
	// could not be read.
	MachineCPU *MachineCPU `json:"machine_cpu,omitempty"`

	// Segments are the segments stored during the whole run.
	Segments SegmentStats `json:"segments"`

	// StartUp is how soon the cameras were recorded once given to the
	// recorder all at once.
	StartUp StartUpStats `json:"start_up"`

	// Frames are the video frames expected and stored.
	Frames FrameStats `json:"frames"`

	// Soak holds the resource samples of a soak run and their growth.
	Soak *Soak `json:"soak,omitempty"`

	// Live is the live LL-HLS latency measured on the first camera.
	Live *LiveStats `json:"live,omitempty"`

	// WebRTC is the cost of WebRTC viewers (Options.WebRTCViewers).
	WebRTC []WebRTCPhase `json:"webrtc,omitempty"`

	// Imaging is the thumbnail and motion detection work of the window.
	Imaging *ImagingStats `json:"imaging,omitempty"`

	// AudioTranscode is the audio transcoding of the window, nil when the
	// cameras' audio is not transcoded.
	AudioTranscode *AudioStats `json:"audio_transcode,omitempty"`

	// Decoders are the recorder's decoder processes (`vigia decode`:
	// thumbnails, snapshots, motion), reported apart from Vigia; nil when
	// none ran.
	Decoders *DecoderStats `json:"decoders,omitempty"`

	// FFmpeg is the comparison sample, nil when disabled.
	FFmpeg *FFmpegStats `json:"ffmpeg,omitempty"`

	// CPUProfile is the file holding the window's CPU profile, if any;
	// MemProfile the heap profile taken at the end of the window.
	CPUProfile string `json:"cpu_profile,omitempty"`
	MemProfile string `json:"mem_profile,omitempty"`
}

// Machine describes the host and the build.
type Machine struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUModel   string `json:"cpu_model"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Kernel     string `json:"kernel,omitempty"`
}

// Usage is a process's resource use over the measured window.
type Usage struct {
	// CPUSeconds is user plus system CPU time used in the window.
	CPUSeconds float64 `json:"cpu_s"`

	// CPUPercent is CPU time over window time, in % of one core.
	CPUPercent float64 `json:"cpu_percent"`

	// CPUPercentPerCamera is CPUPercent divided by the cameras served.
	CPUPercentPerCamera float64 `json:"cpu_percent_per_camera"`

	// RecordingCPUPercentPerCamera is, for the recorder, what recording
	// costs, the figure to set beside other recorders: the recorder's own
	// CPU, since thumbnails and motion decode in the decoder processes
	// (Report.Decoders).
	RecordingCPUPercentPerCamera float64 `json:"recording_cpu_percent_per_camera,omitempty"`

	// RSSBeforeMiB is the resident set before the cameras were added (only
	// for the recorder), RSSEndMiB at the end of the window.
	RSSBeforeMiB float64 `json:"rss_before_mib,omitempty"`
	RSSEndMiB    float64 `json:"rss_end_mib"`

	// RSSPerCameraMiB is, for the recorder, (end − before) / cameras; for
	// FFmpeg, the mean resident set of one process.
	RSSPerCameraMiB float64 `json:"rss_per_camera_mib,omitempty"`

	// GoHeapMiB is the Go heap in use at the end of the window (recorder
	// only).
	GoHeapMiB float64 `json:"go_heap_mib,omitempty"`

	// Memory is where the recorder's resident set goes at the end of the
	// window (recorder only).
	Memory *MemoryStats `json:"memory,omitempty"`
}

// MemoryStats splits the recorder's memory at the end of the window.
type MemoryStats struct {
	// LiveHeapMiB is the heap the last collection marked live; HeapInuseMiB
	// adds what was allocated since, garbage included.
	LiveHeapMiB  float64 `json:"live_heap_mib"`
	HeapInuseMiB float64 `json:"heap_inuse_mib"`
	// HeapFreeMiB is heap memory free but not yet returned to the system.
	HeapFreeMiB float64 `json:"heap_free_mib"`
	StacksMiB   float64 `json:"stacks_mib"`
	// RuntimeMiB is the Go runtime's other memory (GC metadata, spans,
	// buffers).
	RuntimeMiB float64 `json:"runtime_mib"`
	// AnonMiB and FileMiB split the resident set: anonymous memory (Go,
	// C allocations) and mapped files (the binary, shared libraries).
	AnonMiB float64 `json:"anon_mib"`
	FileMiB float64 `json:"file_mib"`
	// AnonBeforeMiB and FileBeforeMiB are the same before the cameras.
	AnonBeforeMiB float64 `json:"anon_before_mib"`
	FileBeforeMiB float64 `json:"file_before_mib"`
}

// SegmentStats summarises stored segments. Latency is from a segment's end
// in the spool to the object stored and checked. "Full" segments were stored
// while recording and last at least half the segment duration (a camera's
// first segment is staggered); "short" ones were stored in the recorder's
// shutdown flush (every camera at once, and segments queued behind it) or
// cut early by a discontinuity, and are reported apart.
type SegmentStats struct {
	Stored            int     `json:"stored"`
	StoredFull        int     `json:"stored_full"`
	StoredShort       int     `json:"stored_short"`
	Bytes             int64   `json:"bytes"`
	LatencyP50Ms      float64 `json:"latency_p50_ms"`
	LatencyP99Ms      float64 `json:"latency_p99_ms"`
	LatencyMaxMs      float64 `json:"latency_max_ms"`
	ShortLatencyP50Ms float64 `json:"short_latency_p50_ms"`
	ShortLatencyMaxMs float64 `json:"short_latency_max_ms"`
}

// StartUpStats measures a start with every camera at once: from the
// moment the cameras were given to the recorder to each camera's first
// stored segment's start (the wall-clock time of its first recorded
// frame).
type StartUpStats struct {
	// Cameras is the number of cameras given; Recorded those with a
	// stored segment.
	Cameras  int `json:"cameras"`
	Recorded int `json:"recorded"`
	// FirstSegmentP50S, P90S and MaxS are percentiles of the first
	// segment's start over the recorded cameras, in seconds.
	FirstSegmentP50S float64 `json:"first_segment_p50_s"`
	FirstSegmentP90S float64 `json:"first_segment_p90_s"`
	FirstSegmentMaxS float64 `json:"first_segment_max_s"`
}

// FrameStats counts video frames (see the definition in docs/benchmarks.md).
type FrameStats struct {
	// FPS is the cameras' frame rate.
	FPS float64 `json:"fps"`

	// CamerasRecorded is the number of cameras with at least one segment.
	CamerasRecorded int `json:"cameras_recorded"`

	// Expected is the frames the cameras sent over the recorded spans;
	// Stored the frames in stored segments; Lost the difference.
	Expected    int64   `json:"expected"`
	Stored      int64   `json:"stored"`
	Lost        int64   `json:"lost"`
	LostPercent float64 `json:"lost_percent"`

	// Received is vigia_received_frames_total (video and audio units) and
	// Dropped vigia_dropped_frames_total by reason, scraped from the node's
	// /metrics at the end of the window; Reconnects is
	// vigia_camera_reconnects_total.
	// CountedFrom says where Stored comes from: "metadata" (the
	// recorder's own count in each segment's metadata) or "files" (the
	// stored files read back, Options.CountFiles); Unreadable is the
	// files that could not be read (their frames count as lost).
	CountedFrom string `json:"counted_from,omitempty"`
	Unreadable  int    `json:"unreadable_files,omitempty"`

	Received   float64            `json:"received_units"`
	Dropped    map[string]float64 `json:"dropped_units"`
	Reconnects float64            `json:"reconnects"`
	MetricsErr string             `json:"metrics_error,omitempty"`
}

// FFmpegStats is the FFmpeg comparison.
type FFmpegStats struct {
	// Processes started and Alive at the end of the window (only those
	// alive count in Usage).
	Processes int `json:"processes"`
	Alive     int `json:"alive"`

	// Usage of the measured processes, per camera (one process per camera).
	Usage Usage `json:"usage"`

	// Files and Bytes written by all processes.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`

	// Ratio is Vigia's CPU per camera over FFmpeg's; RecordingRatio the
	// same with Vigia's recording alone (FFmpeg makes no thumbnails).
	Ratio          float64 `json:"cpu_ratio_vigia_over_ffmpeg"`
	RecordingRatio float64 `json:"recording_cpu_ratio_vigia_over_ffmpeg"`

	// Errors holds the output of processes that exited early.
	Errors []string `json:"errors,omitempty"`
}

// DecoderStats are the recorder's decoder processes over the window.
type DecoderStats struct {
	// Processes running at the end of the window.
	Processes int `json:"processes"`

	// Restarts counts the processes killed and replaced since the start.
	Restarts uint64 `json:"restarts"`

	// Usage is their CPU over the window (per camera: divided by the
	// cameras), their resident set at the end, and, as RSSPerCameraMiB,
	// their mean anonymous memory over the window divided by the cameras:
	// it does not grow with the cameras, but is set beside the recorder's
	// figures, where the decoding was before.
	Usage Usage `json:"usage"`

	// AnonMiB and FileMiB split their resident set at the end: anonymous
	// memory (the Go runtime, libavcodec's pictures) and mapped files (the
	// vigia binary and FFmpeg's libraries, whose pages the recorder maps
	// too).
	AnonMiB float64 `json:"anon_mib"`
	FileMiB float64 `json:"file_mib"`

	// MeanAnonMiB and PeakAnonMiB are their anonymous memory sampled every
	// second of the window (0 while none runs), PeakRSSMiB their resident
	// set's peak: they start with a burst of thumbnails and stop when idle.
	MeanAnonMiB float64 `json:"mean_anon_mib"`
	PeakAnonMiB float64 `json:"peak_anon_mib"`
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
}

// MachineCPU is the busy time of all the machine's CPUs over the window.
type MachineCPU struct {
	// CPUPercent is in % of one core (200 % is two cores busy).
	CPUPercent float64 `json:"cpu_percent"`

	// OtherCPUPercent is what is neither the recorder, its decoder
	// processes nor the run's processes (synthetic cameras, MinIO,
	// FFmpeg): kernel threads, such as
	// the writeback and journal work of the recorder's writes, and any
	// other process on the machine.
	OtherCPUPercent float64 `json:"other_cpu_percent"`
}
