#!/usr/bin/python3
"""An RTSP server for the end-to-end tests that is not gortsplib: GStreamer's
gst-rtsp-server, serving clips in a loop.

Usage: gst_rtsp_server.py H264 H265 AAC

H264 and H265 are Annex-B elementary streams at 15 fps with an access unit
delimiter before every access unit (like synth/fixtures); AAC is ADTS. The
server listens on 127.0.0.1 on a port the system picks and serves:

    /h264      the H.264 clip
    /h265      the H.265 clip
    /h264-aac  the H.264 clip and the AAC clip
    /h264-pcmu the H.264 clip and a 440 Hz tone in G.711 µ-law, 8 kHz, 20 ms packets
    /h264-pcma the same in G.711 A-law
    /h264-opus the H.264 clip and the tone in Opus, 48 kHz, 20 ms packets

Each client gets its own pipeline. An appsrc feeds it the clip's access
units (or ADTS frames) in a loop, timestamped by count, so timestamps go on
across the loop without a jump; the pipeline plays them in real time.

The port is GST_RTSP_PORT from the environment when set (a server started
again on the port of one that was killed), otherwise one the system picks.

Once listening, the server prints "port N" on a line of its own to standard
output, then serves until it is killed or its standard input is closed.

Needs the Debian packages python3-gi gir1.2-gst-rtsp-server-1.0
gstreamer1.0-plugins-good gstreamer1.0-plugins-bad.
"""

import os
import re
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

# Frame rate of the video clips.
FPS = 15

# Sampling rates indexed by the ADTS sampling_frequency_index.
AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]


def video_units(path, codec):
    """Splits an Annex-B stream into access units at its delimiters."""
    data = open(path, "rb").read()
    starts = []
    for m in re.finditer(b"\x00\x00\x01", data):
        header = data[m.end()]
        aud = (header & 0x1F) == 9 if codec == "h264" else ((header >> 1) & 0x3F) == 35
        if aud:
            start = m.start()
            if start > 0 and data[start - 1] == 0:
                start -= 1
            starts.append(start)
    if not starts or starts[0] != 0:
        sys.exit(f"{path}: not an Annex-B stream with an access unit delimiter first")
    return [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def adts_frames(path):
    """Splits an ADTS stream into frames; returns them and the sampling rate."""
    data = open(path, "rb").read()
    frames, pos, rate = [], 0, 0
    while pos + 7 <= len(data):
        if data[pos] != 0xFF or data[pos + 1] & 0xF0 != 0xF0:
            sys.exit(f"{path}: bad ADTS sync at byte {pos}")
        rate = AAC_RATES[(data[pos + 2] >> 2) & 0x0F]
        size = ((data[pos + 3] & 0x03) << 11) | (data[pos + 4] << 3) | (data[pos + 5] >> 5)
        frames.append(data[pos:pos + size])
        pos += size
    if not frames:
        sys.exit(f"{path}: no ADTS frames")
    return frames, rate


class Feed:
    """Pushes units into an appsrc in a loop, one per need-data; unit n
    starts at n * per_unit seconds (per_unit = num / den)."""

    def __init__(self, src, units, num, den):
        self.units, self.num, self.den, self.n = units, num, den, 0
        # The signal holds the feed for as long as the appsrc lives.
        src.connect("need-data", self.need_data)

    def at(self, n):
        return n * self.num * Gst.SECOND // self.den

    def need_data(self, src, _length):
        buf = Gst.Buffer.new_wrapped(self.units[self.n % len(self.units)])
        buf.pts = buf.dts = self.at(self.n)
        buf.duration = self.at(self.n + 1) - buf.pts
        self.n += 1
        src.emit("push-buffer", buf)


def appsrc(name, caps):
    return f'appsrc name={name} is-live=false format=time caps="{caps}"'


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gst_rtsp_server.py H264 H265 AAC")
    Gst.init(None)
    h264 = video_units(sys.argv[1], "h264")
    h265 = video_units(sys.argv[2], "h265")
    aac, rate = adts_frames(sys.argv[3])

    video264 = (appsrc("video", f"video/x-h264,stream-format=byte-stream,alignment=au,framerate={FPS}/1")
                + " ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1")
    video265 = (appsrc("video", f"video/x-h265,stream-format=byte-stream,alignment=au,framerate={FPS}/1")
                + " ! h265parse ! rtph265pay name=pay0 pt=96 config-interval=-1")
    audio = (appsrc("audio", f"audio/mpeg,mpegversion=4,stream-format=adts,rate={rate}")
             + " ! aacparse ! rtpmp4gpay name=pay1 pt=97")
    tone = "audiotestsrc freq=440 volume=0.25 samplesperbuffer={n} ! audio/x-raw,rate={rate},channels=1"
    pcmu = tone.format(n=160, rate=8000) + " ! mulawenc ! rtppcmupay name=pay1 pt=0 min-ptime=20000000 max-ptime=20000000"
    pcma = tone.format(n=160, rate=8000) + " ! alawenc ! rtppcmapay name=pay1 pt=8 min-ptime=20000000 max-ptime=20000000"
    opus = tone.format(n=960, rate=48000) + " ! opusenc ! rtpopuspay name=pay1 pt=97"
    mounts = {
        "/h264": (video264, h264, False),
        "/h265": (video265, h265, False),
        "/h264-aac": (video264 + " " + audio, h264, True),
        "/h264-pcmu": (video264 + " " + pcmu, h264, False),
        "/h264-pcma": (video264 + " " + pcma, h264, False),
        "/h264-opus": (video264 + " " + opus, h264, False),
    }

    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(os.environ.get("GST_RTSP_PORT", "0"))
    points = server.get_mount_points()
    for path, (launch, units, sound) in mounts.items():
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(f"( {launch} )")
        factory.set_shared(False)

        def configure(_factory, media, units=units, sound=sound):
            bin_ = media.get_element()
            Feed(bin_.get_by_name("video"), units, 1, FPS)
            if sound:
                Feed(bin_.get_by_name("audio"), aac, 1024, rate)

        factory.connect("media-configure", configure)
        points.add_factory(path, factory)
    if server.attach(None) == 0:
        sys.exit("gst_rtsp_server.py: cannot listen")

    loop = GLib.MainLoop()
    # Stop when the test closes our standard input (it is done, or died).
    GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT,
                      GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, lambda *_: loop.quit())
    print(f"port {server.get_bound_port()}", flush=True)
    loop.run()


if __name__ == "__main__":
    main()
