#!/usr/bin/python3
"""GStreamer's gst-rtsp-server serving MP4 clips for the interop matrix
(e2e/interop_matrix_test.go): its demuxer, parsers and RTP payloaders, not
the project's, make the RTP a camera would send.

Usage: gst_matrix_server.py CONFIG.json

CONFIG holds the servers and what each serves:

    {"servers": {"NAME": {"auth": "basic" | "digest", "user": U, "pass": P,
                          "cert": PEM, "key": PEM}, ...},
     "mounts": [{"server": NAME, "path": "/p", "file": "clip.mp4",
                 "video": "h264" | "h265", "audio": true | false,
                 "inband": true | false, "audio_mtu": 0,
                 "tcp_only": true | false}, ...]}

A server with "auth" asks for credentials (Basic, or Digest only); one with
"cert" and "key" speaks RTSP over TLS (rtsps). Every client gets its own
pipeline, which plays the clip once from its start in real time
(qtdemux ! parse ! payloader). "inband" puts the parameter sets before every
keyframe as well as in the SDP (config-interval=-1); "audio_mtu" makes the
AAC payloader split frames larger than it over several packets;
"tcp_only" refuses RTP over UDP (461 to such a SETUP).

Each server listens on 127.0.0.1 on a port the system picks. The script
prints "port NAME N" for each, then "ready", and serves until it is killed
or its standard input is closed.

Needs the Debian packages python3-gi gir1.2-gst-rtsp-server-1.0
gstreamer1.0-plugins-good gstreamer1.0-plugins-bad.
"""

import json
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gio, GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402

ROLE = "viewer"


def launch(m):
    """The pipeline of one mount."""
    parse, pay = ("h264parse", "rtph264pay") if m["video"] == "h264" else ("h265parse", "rtph265pay")
    interval = -1 if m.get("inband", True) else 0
    desc = (f'filesrc location="{m["file"]}" ! qtdemux name=d '
            f"d.video_0 ! queue ! {parse} ! {pay} name=pay0 pt=96 config-interval={interval}")
    if m.get("audio"):
        mtu = f' mtu={m["audio_mtu"]}' if m.get("audio_mtu") else ""
        desc += f" d.audio_0 ! queue ! aacparse ! rtpmp4gpay name=pay1 pt=97{mtu}"
    return f"( {desc} )"


def make_server(conf):
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service("0")
    auth = None
    if conf.get("auth") or conf.get("cert"):
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", ROLE)
        if conf.get("auth") == "basic":
            auth.add_basic(GstRtspServer.RTSPAuth.make_basic(conf["user"], conf["pass"]), token)
            auth.set_supported_methods(GstRtsp.RTSPAuthMethod.BASIC)
        elif conf.get("auth") == "digest":
            auth.add_digest(conf["user"], conf["pass"], token)
            auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
        else:
            auth.set_default_token(token)  # anyone may watch
        if conf.get("cert"):
            cert = Gio.TlsCertificate.new_from_files(conf["cert"], conf["key"])
            auth.set_tls_certificate(cert)
        server.set_auth(auth)
    return server, auth is not None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gst_matrix_server.py CONFIG.json")
    Gst.init(None)
    conf = json.load(open(sys.argv[1]))
    servers = {}
    for name, sc in conf["servers"].items():
        servers[name] = make_server(sc)
    for m in conf["mounts"]:
        server, guarded = servers[m["server"]]
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch(m))
        factory.set_shared(False)
        if m.get("tcp_only"):
            factory.set_protocols(GstRtsp.RTSPLowerTrans.TCP)
        if guarded:
            factory.add_role_from_structure(Gst.Structure.from_string(
                f"{ROLE}, media.factory.access=(boolean)true, media.factory.construct=(boolean)true")[0])
        server.get_mount_points().add_factory(m["path"], factory)
    loop = GLib.MainLoop()
    for name, (server, _) in servers.items():
        if server.attach(None) == 0:
            sys.exit(f"gst_matrix_server.py: server {name} cannot listen")
        print(f"port {name} {server.get_bound_port()}", flush=True)
    # Stop when the test closes our standard input (it is done, or died).
    GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT,
                      GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, lambda *_: loop.quit())
    print("ready", flush=True)
    loop.run()


if __name__ == "__main__":
    main()
