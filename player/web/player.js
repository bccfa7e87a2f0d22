// Vigia camera player: live (WebRTC when the live URL is a WHEP address,
// live-webrtc.js, else or as fallback hls.js on the live playlist) and
// recorded playback (hls.js on a VOD playlist around the playing time), the
// timeline of web/timeline.js (window.VigiaTimeline: recorded spans, gaps
// by cause, events, highlight ranges, thumbnails while scrubbing), a click
// on it to seek, and its window moved or zoomed from 10 minutes to 7 days;
// a camera status other than ONLINE is shown over the video with its reason.
// Configuration comes from the JSON block #vigia-config; nothing here
// writes HTML from data (textContent and style properties only).
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('vigia-config').textContent);
  var $ = function (id) { return document.getElementById(id); };
  var body = document.body, video = $('video'), message = $('message'), clock = $('clock');
  var timeline = $('timeline'), cursor = $('tl-cursor');
  var skew = cfg.nowMs - Date.now(); // server time minus local time
  var W = cfg.windowMs;
  // Windows of the zoom buttons; the query's (10 min, 1 h, 24 h) is one.
  var WINDOWS = [600000, 3600000, 86400000, 3 * 86400000, 7 * 86400000];
  // Recorded playback loads the playlist of this much before and after
  // the time asked for (within the window or not), then the next.
  var PLAY_BEFORE = 10 * 60000, PLAY_AFTER = 2 * 3600000;
  var st = {
    mode: cfg.live ? 'live' : 'recorded',
    hls: null,
    rtc: null,        // live WebRTC session (vigiaWebRTC.play)
    frags: [],        // recorded playback: {start (s, playlist time), dur (s), pdt (ms)}
    winStart: 0, winEnd: 0,
    playFrom: 0, playTo: 0, // the range of the playlist loaded
    gen: 0,
  };

  // ---- camera status ----
  // A status other than ONLINE is shown over the video with its reason
  // (the words of the gap causes), from the page's config and then from
  // each live URL renewal, which comes every 10 s while it lasts.
  var REASONS = {
    camera_auth: 'The camera refused the user name or password.',
    stream_unsupported: 'The camera\u2019s stream cannot be recorded (path, codec or address).',
    camera_offline: 'The camera does not answer.',
    camera_blocked: 'Access to this camera is blocked.',
  };
  var camStatus = null;

  function notOnline() { return !!(camStatus && camStatus.text && camStatus.text !== 'ONLINE'); }

  function showStatus(s) {
    camStatus = s || null;
    var el = $('status');
    if (!notOnline()) {
      el.hidden = true;
      delete body.dataset.status;
      delete body.dataset.statusReason;
      return;
    }
    var why = REASONS[camStatus.reason] || '';
    if (camStatus.detail) { why += (why ? ' ' : '') + '(' + camStatus.detail + ')'; }
    $('status-text').textContent = camStatus.text;
    $('status-reason').textContent = why;
    body.dataset.status = camStatus.text;
    body.dataset.statusReason = camStatus.reason || '';
    el.hidden = false;
  }

  // Playability (web/playability.js): what this browser cannot play is
  // said over the video and in body.dataset.unplayable.
  var P = window.vigiaPlayability;

  function now() { return Date.now() + skew; }
  function setState(s) { body.dataset.state = s; }
  function say(text) { message.textContent = text; message.hidden = !text; }

  function fmtTime(ms, withDate) {
    var d = new Date(ms);
    var t = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
    return withDate ? d.toLocaleDateString() + ' ' + t : t;
  }

  // ---- playlist parsing (for the timeline; the player uses hls.js's own) ----
  function parsePlaylist(text) {
    var out = [], pdt = null, pos = 0;
    text.split('\n').forEach(function (line) {
      line = line.trim();
      if (line.indexOf('#EXT-X-PROGRAM-DATE-TIME:') === 0) {
        pdt = Date.parse(line.slice(25));
      } else if (line.indexOf('#EXTINF:') === 0) {
        var dur = parseFloat(line.slice(8));
        if (pdt !== null && isFinite(dur)) { out.push({ start: pos, dur: dur, pdt: pdt }); }
        pos += isFinite(dur) ? dur : 0;
        pdt = null;
      }
    });
    return out;
  }

  function vodURL(from, to) {
    var u = new URL(cfg.vodUrl, location.href);
    u.searchParams.set('from', String(Math.floor(from)));
    u.searchParams.set('to', String(Math.ceil(to)));
    // A camera in H.265 this browser cannot decode: the node's H.264
    // renditions of its segments.
    if (st.h264) { u.searchParams.set('h264', '1'); }
    return u.toString();
  }

  // ---- timeline ----
  var tl = window.VigiaTimeline({
    el: timeline, cfg: cfg, fmtTime: fmtTime,
    onSeek: function (ms) { seekWall(ms); },
  });

  function setWindowAround(ms) {
    var end = Math.min(now(), ms + W / 2);
    st.winEnd = end;
    st.winStart = end - W;
  }

  function pct(ms) { return ((ms - st.winStart) / W) * 100; }

  function windowLabel() {
    if (W >= 2 * 86400000) { return (W / 86400000) + ' d'; }
    return W >= 3600000 ? (W / 3600000) + ' h' : (W / 60000) + ' min';
  }

  function drawTimeline() {
    tl.setWindow(st.winStart, st.winEnd);
    tl.draw();
    var day = W > 3600 * 1000;
    $('tl-from').textContent = fmtTime(st.winStart, day);
    $('tl-mid').textContent = fmtTime(st.winStart + W / 2, day);
    $('tl-to').textContent = fmtTime(st.winEnd, day);
    $('window-label').textContent = windowLabel();
    updateCursor();
  }

  function loadTimeline() {
    drawTimeline();
    return tl.load();
  }

  // fitWindow narrows the live window when the page opened with the
  // default one (no timeline_interval) and the camera's recordings in it
  // began recently: to the shortest zoom window that holds them from
  // their first start to now with a tenth to spare, so a new camera's
  // first minutes are not a sliver of 24 hours. It acts once, on the first
  // load that has recordings, and not after the viewer zoomed.
  var fitPending = !!(cfg.live && cfg.fitWindow);
  function fitWindow() {
    var d = tl.data();
    if (!fitPending || st.mode !== 'live' || !d || !d.recorded || !d.recorded.length) { return; }
    fitPending = false;
    var first = Math.min.apply(null, d.recorded.map(function (r) { return r.start_ms; }));
    var span = now() - first;
    for (var i = 0; i < WINDOWS.length && WINDOWS[i] < W; i++) {
      if (span <= WINDOWS[i] * 0.9) {
        W = WINDOWS[i];
        body.dataset.fitWindow = String(W);
        setWindowAround(now());
        loadTimeline();
        return;
      }
    }
  }

  // ---- position mapping ----
  function fragsFromHls() {
    var lv = st.hls && st.hls.levels && st.hls.levels[0];
    var fr = lv && lv.details && lv.details.fragments;
    if (!fr || !fr.length) { return null; }
    return fr.filter(function (f) { return f.programDateTime; }).map(function (f) {
      return { start: f.start, dur: f.duration, pdt: f.programDateTime };
    });
  }

  function posForWall(ms) {
    var fr = st.frags;
    for (var i = 0; i < fr.length; i++) {
      var f = fr[i];
      if (ms < f.pdt) { return f.start; } // in a gap: the next recorded segment
      if (ms < f.pdt + f.dur * 1000) { return f.start + (ms - f.pdt) / 1000; }
    }
    return null;
  }

  function wallForPos(t) {
    var fr = st.frags;
    for (var i = fr.length - 1; i >= 0; i--) {
      if (t >= fr[i].start - 0.05) { return fr[i].pdt + Math.max(0, t - fr[i].start) * 1000; }
    }
    return null;
  }

  function currentWall() {
    if (st.mode === 'live') {
      var d = st.hls && st.hls.playingDate;
      return d ? d.getTime() : now();
    }
    return wallForPos(video.currentTime);
  }

  function updateCursor() {
    var ms = currentWall();
    if (ms === null || ms === undefined) { cursor.hidden = true; return; }
    clock.dataset.ms = String(Math.round(ms));
    clock.textContent = fmtTime(ms, true);
    var p = pct(ms);
    if (st.mode === 'recorded' && p > 100 && !video.paused) {
      // Playback left the window: the window follows it.
      setWindowAround(ms + W / 2 - W / 10);
      loadTimeline();
      p = pct(ms);
    }
    cursor.hidden = p < 0 || p > 100;
    cursor.style.left = p + '%';
  }

  // ---- live URL renewal ----
  // The live URL carries a short-lived token (exp, sig). Halfway to its exp
  // the page asks cfg.liveRenewUrl for a fresh URL; every request hls.js
  // makes to the live node carries the newest token (liveRequestURL). When
  // the camera moved to another node, live playback restarts there.
  var renewTimer = null, renewRetry = 0;

  function abs(u) { try { return new URL(u, location.href); } catch (e) { return null; } }

  function liveExpMs(u) {
    var x = abs(u);
    return x ? Number(x.searchParams.get('exp')) * 1000 || 0 : 0;
  }

  function liveRequestURL(u) {
    var cur = abs(cfg.liveUrl), x = abs(u);
    if (!cur || !x || x.origin !== cur.origin || x.searchParams.get('sig') === null) { return u; }
    x.searchParams.set('exp', cur.searchParams.get('exp') || '');
    x.searchParams.set('sig', cur.searchParams.get('sig') || '');
    return x.toString();
  }

  function scheduleRenew() {
    clearTimeout(renewTimer);
    renewTimer = null;
    if (!cfg.liveRenewUrl) { return; }
    var ms = cfg.liveUrl ? (liveExpMs(cfg.liveUrl) - now()) / 2 : 30000;
    if (notOnline()) { ms = Math.min(ms, 10000); }
    renewTimer = setTimeout(renewLive, Math.max(1000, ms));
  }

  // retryRenew tries again after a failure or while the camera has no live
  // stream: 5 s, doubling up to a minute.
  function retryRenew() {
    clearTimeout(renewTimer);
    renewRetry = Math.min(renewRetry ? renewRetry * 2 : 5000, 60000);
    renewTimer = setTimeout(renewLive, notOnline() ? Math.min(renewRetry, 10000) : renewRetry);
  }

  function renewLive() {
    fetch(cfg.liveRenewUrl, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (b) {
      if (b && b.status) { showStatus(b.status); }
      if (!b || b.code !== 0 || !b.data) { retryRenew(); return; }
      var before = abs(cfg.liveUrl), after = abs(b.data);
      var moved = !before || !after || before.origin !== after.origin || before.pathname !== after.pathname;
      cfg.liveUrl = b.data;
      renewRetry = 0;
      body.dataset.liveExp = String(liveExpMs(cfg.liveUrl));
      scheduleRenew();
      if (moved && st.mode === 'live') { goLive(); } else if (st.rtc) { st.rtc.renew(cfg.liveUrl); }
    }).catch(retryRenew);
  }

  // ---- playback ----
  function stop() {
    st.gen++;
    if (st.unwatch) { st.unwatch(); st.unwatch = null; }
    if (P) { P.clear(); }
    if (st.hls) { st.hls.destroy(); st.hls = null; }
    if (st.rtc) { st.rtc.close(); st.rtc = null; }
    st.frags = [];
    video.removeAttribute('src');
    video.load();
  }

  function setMode(mode) {
    st.mode = mode;
    var badge = $('mode');
    badge.className = 'badge ' + mode;
    badge.textContent = mode === 'live' ? 'Live' : 'Recorded';
    delete body.dataset.transport;
  }

  // setTransport shows how live video comes: webrtc or hls.
  function setTransport(t) {
    body.dataset.transport = t;
    $('mode').textContent = 'Live · ' + (t === 'webrtc' ? 'WebRTC' : 'HLS');
  }

  function usable() {
    if (window.Hls && window.Hls.isSupported()) { return 'hls'; }
    if (video.canPlayType('application/vnd.apple.mpegurl')) { return 'native'; }
    return '';
  }

  function noPlayer() {
    setState('error');
    say(cfg.hasBundle ? 'This browser cannot play HLS video.'
      : 'The hls.js bundle is missing from this build (run make deps-npm and rebuild).');
  }

  function play() {
    video.playbackRate = Number($('speed').value) || 1;
    var p = video.play();
    if (p && p.catch) { p.catch(function () {}); }
  }

  function goLive() {
    stop();
    setMode('live');
    setWindowAround(now());
    loadTimeline().then(fitWindow);
    if (!cfg.liveUrl) {
      setState('live-unavailable');
      say('Live video is not available for this camera. Click the timeline to watch recordings.');
      return;
    }
    say('');
    setState('live');
    var rtc = window.vigiaWebRTC;
    if (rtc && rtc.isWHEP(cfg.liveUrl)) {
      var gen = st.gen;
      st.rtc = rtc.play(video, cfg.liveUrl, {
        timeoutMs: 4000,
        onPlaying: function () { if (gen === st.gen) { st.rtcWaits = 0; setTransport('webrtc'); } },
        onFail: function (why, wasPlaying, retryAfter, status, text) {
          if (gen !== st.gen) { return; }
          st.rtc = null;
          body.dataset.webrtcError = why;
          var reason = P && !wasPlaying ? P.fromRefusal(status, text) : '';
          if (reason) { unplayable(reason); return; }
          // A session that played and broke (camera restarted, node
          // left) is tried again, and so is one the node refused for a
          // camera with no video yet (connecting: up to 10 times, as it
          // asks); one that never played otherwise falls back.
          if (wasPlaying) { goLive(); return; }
          if (retryAfter > 0 && (st.rtcWaits || 0) < 10) {
            st.rtcWaits = (st.rtcWaits || 0) + 1;
            say('Waiting for the camera\u2019s first picture\u2026');
            st.rtcRetry = setTimeout(function () { if (gen === st.gen) { goLive(); } }, retryAfter * 1000);
            return;
          }
          playLiveHLS();
        },
      });
      return;
    }
    playLiveHLS();
  }

  // liveH264URL returns the node's LL-HLS in H.264 whatever the camera
  // sends (an H.265 camera's transcoded rendition, an H.264 camera's own
  // stream) beside a live playlist address: /live/{camera}/h264/index.m3u8.
  function liveH264URL(u) {
    var x = abs(u);
    if (!x || !/\/live\/[^/]+\/index\.m3u8$/.test(x.pathname)) { return u; }
    x.pathname = x.pathname.replace(/\/index\.m3u8$/, '/h264/index.m3u8');
    return x.toString();
  }

  function playLiveHLS() {
    var src = window.vigiaWebRTC ? window.vigiaWebRTC.hlsURL(cfg.liveUrl) : cfg.liveUrl;
    var kind = usable();
    if (!kind) { noPlayer(); return; }
    // A browser whose MSE decodes no HEVC asks for H.264: it plays an
    // H.265 camera from the node's transcoder.
    if (kind === 'hls' && P && !P.hevc().mse) {
      var h = liveH264URL(src);
      if (h !== src) { src = h; body.dataset.rendition = 'h264'; }
    }
    setTransport('hls');
    watchStall();
    if (kind === 'native') { video.src = src; play(); return; }
    var hls = new window.Hls({
      lowLatencyMode: true, backBufferLength: 30,
      xhrSetup: function (xhr, url) { xhr.open('GET', liveRequestURL(url), true); },
    });
    st.hls = hls;
    hls.on(window.Hls.Events.ERROR, onLiveHlsError);
    hls.on(window.Hls.Events.MANIFEST_PARSED, play);
    hls.loadSource(src);
    hls.attachMedia(video);
  }

  // unplayable ends playback and says why (a reason of playability.js).
  function unplayable(reason) {
    stop();
    setState('unplayable');
    say('');
    P.show(reason);
  }

  // watchStall says why when the video has had no data 10 s after it was
  // asked for: the camera's H.265 the browser cannot decode, or a stall.
  function watchStall() {
    if (!P) { return; }
    if (st.unwatch) { st.unwatch(); }
    st.unwatch = P.watch(video, {
      onStall: function () {
        var lv = st.hls && st.hls.levels && st.hls.levels[0];
        var codec = (lv && (lv.videoCodec || lv.codecSet)) || '';
        if (/hvc1|hev1/i.test(codec) && !P.hevc().mse) { stop(); setState('unplayable'); return 'h265'; }
        return 'stalled';
      },
    });
  }

  // onLiveHlsError says why when the node refuses the live playlist: an
  // H.265 camera it does not transcode (406) or no transcode left (503
  // naming the capacity), read from the answer's body.
  function onLiveHlsError(ev, data) {
    if (P && data && data.details === window.Hls.ErrorDetails.MANIFEST_LOAD_ERROR && data.response) {
      var x = data.networkDetails, code = data.response.code;
      var text = x && typeof x.responseText === 'string' ? x.responseText : '';
      var reason = P.fromRefusal(code, text) || (code === 406 && body.dataset.rendition === 'h264' && !P.hevc().mse ? 'h265' : '');
      if (reason) { unplayable(reason); return; }
    }
    onHlsError(ev, data);
  }

  function onHlsError(_, data) {
    var reason = P ? P.fromHlsError(data) : '';
    if (reason) { unplayable(reason); return; }
    if (!data || !data.fatal) { return; }
    if (data.type === window.Hls.ErrorTypes.MEDIA_ERROR && st.hls) { st.hls.recoverMediaError(); return; }
    setState('error');
    say(st.mode === 'live' ? 'Live video failed to load.' : 'The recording failed to load.');
  }

  // goRecorded plays the recordings from ms: the playlist of
  // [ms - PLAY_BEFORE, ms + PLAY_AFTER] (up to now); with keepWindow the
  // timeline's window stays where it is when ms lies in it.
  function goRecorded(ms, keepWindow) {
    stop();
    setMode('recorded');
    if (!keepWindow || ms < st.winStart || ms > st.winEnd) {
      setWindowAround(ms);
      loadTimeline();
    }
    var gen = st.gen;
    setState('loading');
    say('');
    st.playFrom = ms - PLAY_BEFORE;
    st.playTo = Math.min(now(), ms + PLAY_AFTER);
    if (st.playTo <= st.playFrom) { st.playTo = st.playFrom + 1000; }
    var url = vodURL(st.playFrom, st.playTo);
    var kind = usable();
    if (!kind) { noPlayer(); return; }
    if (kind === 'hls') { playRecordedHls(url, ms, gen); return; }
    // Native HLS: the playlist is read first, to find where ms lies in it.
    fetch(url, { credentials: 'same-origin' }).then(function (r) {
      if (r.status === 404) { return null; }
      if (!r.ok) { throw new Error('status ' + r.status); }
      return r.text();
    }).then(function (text) {
      if (gen !== st.gen) { return; }
      var frags = text ? parsePlaylist(text) : [];
      if (!frags.length) { noRecordings(); return; }
      st.frags = frags;
      var pos = posForWall(ms);
      if (pos === null) { pos = frags[frags.length - 1].start; }
      video.src = url;
      video.addEventListener('loadedmetadata', function once() {
        video.removeEventListener('loadedmetadata', once);
        video.currentTime = pos;
        play();
      });
      setState('recorded');
    }).catch(function () {
      if (gen !== st.gen) { return; }
      setState('error');
      say('The recordings could not be listed.');
    });
  }

  function noRecordings() {
    setState('no-recordings');
    say('No recordings in this period.');
  }

  // playRecordedHls plays url with hls.js from the wall-clock time ms: the
  // playlist is loaded once, by hls.js, which starts loading at ms's
  // position as soon as it has it.
  function playRecordedHls(url, ms, gen) {
    var hls = new window.Hls({ autoStartLoad: false, maxBufferLength: 30 });
    st.hls = hls;
    hls.on(window.Hls.Events.ERROR, function (ev, data) {
      if (gen !== st.gen) { return; }
      if (P && !st.h264 && P.fromHlsError(data) === 'h265') {
        // Ask once for the H.264 renditions; a node without them answers
        // the same playlist, and the page then says why it cannot play.
        st.h264 = true;
        body.dataset.rendition = 'h264';
        setTimeout(function () { if (gen === st.gen) { goRecorded(ms, true); } }, 0);
        return;
      }
      var r = data && data.response;
      if (data && data.details === window.Hls.ErrorDetails.MANIFEST_LOAD_ERROR && r && r.code === 404) {
        setTimeout(function () { if (gen === st.gen) { stop(); noRecordings(); } }, 0);
        return;
      }
      if (data && data.fatal && data.details === window.Hls.ErrorDetails.MANIFEST_LOAD_ERROR) {
        setState('error');
        say('The recordings could not be listed.');
        return;
      }
      onHlsError(ev, data);
    });
    hls.on(window.Hls.Events.LEVEL_LOADED, function () {
      var hf = fragsFromHls();
      if (!hf || !hf.length) { setTimeout(function () { if (gen === st.gen) { stop(); noRecordings(); } }, 0); return; }
      st.frags = hf;
      var p = posForWall(ms);
      hls.startLoad(p === null ? hf[hf.length - 1].start : p);
    });
    hls.on(window.Hls.Events.LEVEL_UPDATED, function () {
      var hf = fragsFromHls();
      if (hf && hf.length) { st.frags = hf; }
    });
    hls.on(window.Hls.Events.MANIFEST_PARSED, play);
    hls.loadSource(url);
    hls.attachMedia(video);
    setState('recorded');
    watchStall();
  }

  function seekWall(ms) {
    if (ms >= now() - 5000 && cfg.liveUrl) { goLive(); return; }
    body.dataset.seekMs = String(Math.round(ms));
    body.dataset.seekAt = String(Date.now());
    if (st.mode === 'recorded' && st.frags.length && ms >= st.playFrom && ms <= st.playTo) {
      var pos = posForWall(ms);
      if (pos !== null) { video.currentTime = pos; play(); updateCursor(); return; }
    }
    goRecorded(ms, true);
  }

  // ---- controls ----
  cfg.speeds.forEach(function (s) {
    var o = document.createElement('option');
    o.value = String(s);
    o.textContent = s + 'x';
    if (s === cfg.speed) { o.selected = true; }
    $('speed').appendChild(o);
  });
  $('speed').addEventListener('change', function () { video.playbackRate = Number(this.value) || 1; });
  video.addEventListener('ratechange', function () {
    var want = Number($('speed').value) || 1;
    if (video.playbackRate !== want && video.playbackRate === 1) { video.playbackRate = want; }
  });
  $('play').addEventListener('click', function () { if (video.paused) { play(); } else { video.pause(); } });
  video.addEventListener('play', function () { $('play').textContent = 'Pause'; });
  video.addEventListener('pause', function () { $('play').textContent = 'Play'; });
  $('live').addEventListener('click', goLive);
  $('prev').addEventListener('click', function () {
    st.winEnd -= W; st.winStart -= W; loadTimeline();
  });
  $('next').addEventListener('click', function () {
    st.winEnd = Math.min(now(), st.winEnd + W); st.winStart = st.winEnd - W; loadTimeline();
  });
  // zoom keeps the middle of the window where it is (and the window's end
  // no later than now).
  function zoom(dir) {
    var i = WINDOWS.indexOf(W);
    if (i < 0) { i = 2; }
    var next = WINDOWS[Math.max(0, Math.min(WINDOWS.length - 1, i + dir))];
    if (next === W) { return; }
    fitPending = false;
    var mid = st.winStart + W / 2;
    W = next;
    setWindowAround(mid);
    loadTimeline();
  }
  $('zoom-in').addEventListener('click', function () { zoom(-1); });
  $('zoom-out').addEventListener('click', function () { zoom(1); });
  $('fullscreen').addEventListener('click', function () {
    var el = $('player');
    if (document.fullscreenElement) { document.exitFullscreen(); } else if (el.requestFullscreen) { el.requestFullscreen(); }
  });

  // ---- sound ----
  // The page starts muted (browsers autoplay only muted video); the Sound
  // button, shown once the stream has sound (a WebRTC audio track, or
  // audio decoded from HLS), turns it on and off: a click is the user's
  // gesture browsers ask for. body.dataset.sound is "off" or "on".
  function hasSound() {
    var s = video.srcObject;
    if (s && s.getAudioTracks) { return s.getAudioTracks().length > 0; }
    if (video.audioTracks && video.audioTracks.length > 0) { return true; }
    return video.mozHasAudio === true || video.webkitAudioDecodedByteCount > 0;
  }
  function showSound() {
    var b = $('sound');
    b.textContent = video.muted ? 'Sound off' : 'Sound on';
    b.setAttribute('aria-pressed', video.muted ? 'false' : 'true');
    body.dataset.sound = video.muted ? 'off' : 'on';
    if (b.hidden && hasSound()) { b.hidden = false; }
  }
  $('sound').addEventListener('click', function () {
    video.muted = !video.muted;
    if (!video.muted) { play(); }
  });
  video.addEventListener('volumechange', showSound);
  video.addEventListener('playing', showSound);
  setInterval(function () { if ($('sound').hidden) { showSound(); } }, 1000);

  // ---- downloadable videos ----
  // The Videos button lists the camera's ready downloadable videos (from
  // cfg.videosUrl), each linked with its signed manifest, the manifest's
  // raw Ed25519 signature and the public key that verifies it
  // (docs/export.md). Links are built with href and textContent only.
  function showVideos() {
    var panel = $('videos-panel'), list = $('videos-list'), btn = $('videos');
    if (!panel.hidden) {
      panel.hidden = true;
      btn.setAttribute('aria-expanded', 'false');
      return Promise.resolve();
    }
    function line(text) {
      var li = document.createElement('li');
      li.textContent = text;
      list.appendChild(li);
    }
    return fetch(cfg.videosUrl, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      if (!r.ok) { throw new Error('videos: HTTP ' + r.status); }
      return r.json();
    }).then(function (d) {
      list.textContent = '';
      (d.videos || []).forEach(function (v) {
        var li = document.createElement('li');
        li.className = 'video';
        li.dataset.id = String(v.id);
        var name = document.createElement('span');
        name.className = 'name';
        name.textContent = (v.description ? v.description + ' \u2014 ' : '') + fmtTime(v.start_at, true) + ' \u2013 ' + fmtTime(v.end_at, true);
        li.appendChild(name);
        [['video', 'Video', v.url], ['manifest', 'Manifest', v.manifest], ['signature', 'Signature', v.manifest_sig], ['key', 'Public key', d.key_url]].forEach(function (l) {
          if (!l[2]) { return; }
          var a = document.createElement('a');
          a.className = l[0];
          a.href = l[2];
          a.textContent = l[1];
          a.target = '_blank';
          a.rel = 'noopener';
          li.appendChild(a);
        });
        list.appendChild(li);
      });
      if (!list.children.length) { line('No downloadable videos of this camera yet.'); }
    }).catch(function () {
      list.textContent = '';
      line('The downloadable videos could not be read.');
    }).then(function () {
      panel.hidden = false;
      btn.setAttribute('aria-expanded', 'true');
    });
  }
  if (cfg.videosUrl) {
    $('videos').hidden = false;
    $('videos').addEventListener('click', showVideos);
  }

  video.addEventListener('timeupdate', updateCursor);
  video.addEventListener('error', function () {
    // Native HLS cannot renew the token of a running stream: reopen it with
    // the newest URL.
    if (st.mode === 'live' && !st.hls && !st.rtc && cfg.liveUrl && usable() === 'native') { playLiveHLS(); }
  });
  video.addEventListener('playing', function () {
    body.dataset.playing = '1';
    if (body.dataset.seekAt) { body.dataset.seekToPlayingMs = String(Date.now() - Number(body.dataset.seekAt)); }
  });
  video.addEventListener('ended', function () {
    if (st.mode !== 'recorded') { return; }
    if (st.playTo < now() - 5000) { goRecorded(st.playTo, true); } else if (cfg.liveUrl) { goLive(); }
  });
  setInterval(function () {
    if (st.mode === 'live') { setWindowAround(now()); loadTimeline().then(fitWindow); }
  }, 60000);

  window.vigiaPlayer = { seekWall: seekWall, goLive: goLive, goRecorded: goRecorded, wall: currentWall, zoom: zoom, timeline: tl };
  showStatus(cfg.status);
  body.dataset.liveExp = String(liveExpMs(cfg.liveUrl));
  scheduleRenew();
  if (cfg.live) { goLive(); } else { goRecorded(cfg.startMs); }
})();
