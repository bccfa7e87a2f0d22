// Vigia live video over WebRTC (WHEP, RFC 9725), for the player page.
// window.vigiaWebRTC.play(video, whepURL, opts) offers to receive the
// camera's video, POSTs the offer to the node's WHEP address and plays the
// answer's stream in video. It reports through opts.onPlaying() once a
// frame is shown and opts.onFail(reason, wasPlaying, retryAfter, status,
// body) when the browser lacks the codecs, the node refuses (status and
// body of its answer), nothing plays within opts.timeoutMs (4 s; twice
// that for a session connected but still without a picture), the
// connection fails later or the picture stops for 3 s (the node ended
// the session). The session's address takes a renewed token
// (renew) and is deleted on close. document.body.dataset.webrtcSessions
// counts the sessions opened.
(function () {
  'use strict';

  // isWHEP reports whether a live address is a WHEP endpoint.
  function isWHEP(u) {
    try { return /\/whep$/.test(new URL(u, location.href).pathname); } catch (e) { return false; }
  }

  // hlsURL returns the LL-HLS playlist of a live address: the node signs
  // both with the same token, they differ in the last path element.
  function hlsURL(u) {
    if (!isWHEP(u)) { return u; }
    var x = new URL(u, location.href);
    x.pathname = x.pathname.replace(/\/whep$/, '/index.m3u8');
    return x.toString();
  }

  // videoCodecs returns the browser's receivable video codecs (lower case
  // MIME subtypes), or null when it cannot tell.
  function videoCodecs() {
    if (!window.RTCRtpReceiver || !RTCRtpReceiver.getCapabilities) { return null; }
    var caps = RTCRtpReceiver.getCapabilities('video');
    if (!caps) { return null; }
    return caps.codecs.map(function (c) { return c.mimeType.toLowerCase().replace('video/', ''); });
  }

  function body() { return document.body; }

  function gathered(pc, ms) {
    return new Promise(function (resolve) {
      if (pc.iceGatheringState === 'complete') { resolve(); return; }
      var t = setTimeout(resolve, ms);
      pc.addEventListener('icegatheringstatechange', function () {
        if (pc.iceGatheringState === 'complete') { clearTimeout(t); resolve(); }
      });
    });
  }

  function play(video, url, opts) {
    opts = opts || {};
    var s = { pc: null, location: null, closed: false, playing: false, failed: false };
    // fail ends the session; retryAfter (seconds) is set when the node
    // said the camera has no video yet (503 with Retry-After).
    function fail(why, retryAfter, status, text) {
      if (s.closed || s.failed) { return; }
      s.failed = true;
      var was = s.playing;
      close();
      if (opts.onFail) { opts.onFail(why, was, retryAfter || 0, status || 0, text || ''); }
    }
    function close() {
      if (s.closed) { return; }
      s.closed = true;
      clearTimeout(s.timer);
      clearInterval(s.watch);
      if (s.location) {
        fetch(s.location, { method: 'DELETE', keepalive: true }).catch(function () {});
      }
      if (s.pc) { s.pc.close(); }
      if (video.srcObject) { video.srcObject = null; }
    }
    s.close = close;
    // renew hands the session a newer token (the same camera's live URL).
    s.renew = function (newURL) {
      if (!s.location || s.closed) { return; }
      var q = new URL(newURL, location.href).search;
      var target = new URL(s.location);
      target.search = q;
      fetch(target.toString(), { method: 'PATCH' }).catch(function () {});
    };

    var codecs = videoCodecs();
    if (!window.RTCPeerConnection || (codecs && codecs.indexOf('h264') < 0 && codecs.indexOf('h265') < 0)) {
      setTimeout(function () { fail('this browser cannot receive H.264 or H.265 over WebRTC'); }, 0);
      return s;
    }
    // watchFrames fails the session when no new picture came for 3 s: a
    // node ending a session is not always seen as a closed connection.
    function watchFrames() {
      if (!video.getVideoPlaybackQuality) { return; }
      var last = -1, still = 0;
      s.watch = setInterval(function () {
        var n = video.getVideoPlaybackQuality().totalVideoFrames;
        still = n === last ? still + 1 : 0;
        last = n;
        if (still >= 3) { fail('no picture over WebRTC for 3 s'); }
      }, 1000);
    }
    body().dataset.webrtcSessions = String(Number(body().dataset.webrtcSessions || 0) + 1);
    // A session connected but without a picture yet (the node's
    // transcoder starting, waiting for the camera's next keyframe) gets
    // the time once more; one that did not connect falls back at once.
    var waitMs = opts.timeoutMs || 4000, extended = false;
    function noPicture() {
      if (!extended && s.pc && s.pc.connectionState === 'connected') {
        extended = true;
        s.timer = setTimeout(noPicture, waitMs);
        return;
      }
      fail('no picture over WebRTC within ' + ((extended ? 2 : 1) * waitMs / 1000) + ' s');
    }
    s.timer = setTimeout(noPicture, waitMs);
    var pc = new RTCPeerConnection();
    s.pc = pc;
    pc.addTransceiver('video', { direction: 'recvonly' });
    // The camera's sound, as Opus, when it has some; the node answers
    // the section inactive otherwise.
    pc.addTransceiver('audio', { direction: 'recvonly' });
    pc.ontrack = function (ev) {
      // Audio and video come in one stream, which the browser keeps in
      // sync; a track of no stream is added to the one playing.
      var st = ev.streams && ev.streams[0];
      if (!st) {
        st = video.srcObject instanceof MediaStream ? video.srcObject : new MediaStream();
        st.addTrack(ev.track);
      }
      if (video.srcObject === st) { return; }
      video.srcObject = st;
      var p = video.play();
      if (p && p.catch) { p.catch(function () {}); }
    };
    pc.onconnectionstatechange = function () {
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') { fail('WebRTC connection ' + pc.connectionState); }
    };
    video.addEventListener('playing', function onPlaying() {
      video.removeEventListener('playing', onPlaying);
      if (s.closed) { return; }
      clearTimeout(s.timer);
      s.playing = true;
      watchFrames();
      if (opts.onPlaying) { opts.onPlaying(); }
    });
    pc.createOffer().then(function (o) {
      return pc.setLocalDescription(o);
    }).then(function () {
      return gathered(pc, 1000);
    }).then(function () {
      if (s.closed) { throw new Error('closed'); }
      return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sdp' }, body: pc.localDescription.sdp });
    }).then(function (r) {
      if (r.status === 503 && r.headers.get('Retry-After')) {
        var e = new Error('the camera has no video yet');
        e.retryAfter = Number(r.headers.get('Retry-After')) || 1;
        throw e;
      }
      if (r.status !== 201) {
        return r.text().catch(function () { return ''; }).then(function (t) {
          var e = new Error('the node answered ' + r.status + (t ? ': ' + t.trim().slice(0, 200) : ''));
          e.status = r.status;
          e.body = t;
          throw e;
        });
      }
      var loc = r.headers.get('Location');
      if (loc && s.closed) { fetch(new URL(loc, url).toString(), { method: 'DELETE', keepalive: true }).catch(function () {}); }
      if (loc) { s.location = new URL(loc, url).toString(); }
      return r.text();
    }).then(function (sdp) {
      if (s.closed) { return null; }
      return pc.setRemoteDescription({ type: 'answer', sdp: sdp });
    }).catch(function (e) { fail(String(e && e.message || e), e && e.retryAfter, e && e.status, e && e.body); });
    return s;
  }

  window.vigiaWebRTC = { play: play, isWHEP: isWHEP, hlsURL: hlsURL, videoCodecs: videoCodecs };
})();
