#!/usr/bin/python3
"""A WebRTC viewer for the end-to-end tests that is neither a browser nor
pion: GStreamer's webrtcbin (libnice for ICE), with a small WHEP signalling
of its own.

Usage: gst_whep_client.py WHEP_URL FRAMES

It gathers candidates on loopback only (the node is on the same machine),
offers to receive H.264 video, POSTs the offer (all candidates gathered)
to WHEP_URL, applies the answer, and decodes what arrives
(rtph264depay ! h264parse ! avdec_h264). It prints "decoded N WxH" once
FRAMES pictures are decoded and exits 0; it exits 1 with a message on an
error or when nothing is decoded within 30 s.

Needs the Debian packages python3-gi gstreamer1.0-plugins-bad
gstreamer1.0-nice gir1.2-gst-plugins-bad-1.0 gstreamer1.0-libav.
"""

import sys
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

Gst.init(None)
url, want = sys.argv[1], int(sys.argv[2])
loop = GLib.MainLoop()
result = {"code": 1, "frames": 0, "size": ""}


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    result["code"] = 1
    loop.quit()


pipe = Gst.Pipeline.new("viewer")
webrtc = Gst.ElementFactory.make("webrtcbin", "recv")
webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
pipe.add(webrtc)
# The node is on this machine: ICE on loopback only.
ice = webrtc.get_property("ice-agent")
ice.emit("add-local-ip-address", "127.0.0.1")
caps = Gst.Caps.from_string(
    "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,packetization-mode=(string)1")
webrtc.emit("add-transceiver", GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY, caps)


def on_handoff(sink, buf, pad):
    result["frames"] += 1
    if not result["size"]:
        s = pad.get_current_caps().get_structure(0)
        result["size"] = "%dx%d" % (s.get_value("width"), s.get_value("height"))
    if result["frames"] >= want:
        print("decoded %d %s" % (result["frames"], result["size"]), flush=True)
        result["code"] = 0
        loop.quit()


def on_pad(_, pad):
    if pad.direction != Gst.PadDirection.SRC:
        return
    chain = Gst.parse_bin_from_description(
        "rtph264depay ! h264parse ! avdec_h264 ! fakesink name=sink signal-handoffs=true sync=false", True)
    pipe.add(chain)
    chain.sync_state_with_parent()
    sink = chain.get_by_name("sink")
    sink.connect("handoff", on_handoff)
    pad.link(chain.get_static_pad("sink"))


webrtc.connect("pad-added", on_pad)


def post_offer():
    offer = webrtc.get_property("local-description").sdp.as_text()
    req = urllib.request.Request(url, data=offer.encode(), method="POST",
                                 headers={"Content-Type": "application/sdp"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            if res.status != 201:
                fail("WHEP answered %d" % res.status)
                return False
            answer = res.read().decode()
    except Exception as e:  # noqa: BLE001
        fail("WHEP POST: %s" % e)
        return False
    _, sdp = GstSdp.SDPMessage.new_from_text(answer)
    desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, sdp)
    webrtc.emit("set-remote-description", desc, Gst.Promise.new())
    return False


def on_gathering(element, _):
    if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
        GLib.idle_add(post_offer)


webrtc.connect("notify::ice-gathering-state", on_gathering)


def on_offer(promise, _):
    reply = promise.get_reply()
    offer = reply.get_value("offer")
    webrtc.emit("set-local-description", offer, Gst.Promise.new())


def on_negotiation(element):
    element.emit("create-offer", None, Gst.Promise.new_with_change_func(on_offer, None))


webrtc.connect("on-negotiation-needed", on_negotiation)


def on_message(_, msg):
    if msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        fail("gstreamer: %s (%s)" % (err, dbg))


bus = pipe.get_bus()
bus.add_signal_watch()
bus.connect("message", on_message)
GLib.timeout_add_seconds(30, lambda: fail("decoded %d of %d frames in 30 s" % (result["frames"], want)))
pipe.set_state(Gst.State.PLAYING)
loop.run()
pipe.set_state(Gst.State.NULL)
sys.exit(result["code"])
