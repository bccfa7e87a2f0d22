// Vigia camera player: live (WebRTC when the live URL is a WHEP address,
// live-webrtc.js, else or as fallback hls.js on the live playlist) and recorded
// playback (hls.js on a VOD playlist of the timeline's window), a timeline
// of recorded segments and highlight ranges, and a click on it to seek.
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
  var st = {
    mode: cfg.live ? 'live' : 'recorded',
    hls: null,
    rtc: null,        // live WebRTC session (vigiaWebRTC.play)
    frags: [],        // recorded playback: {start (s, playlist time), dur (s), pdt (ms)}
    segs: [],         // timeline: recorded spans {s, e} (ms) of the window
    winStart: 0, winEnd: 0,
    pendingSeekMs: null,
    gen: 0,
  };

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
    return u.toString();
  }

  // ---- timeline ----
  function setWindowAround(ms) {
    var end = Math.min(now(), ms + W / 2);
    st.winEnd = end;
    st.winStart = end - W;
  }

  function pct(ms) { return ((ms - st.winStart) / W) * 100; }

  function drawSpans(container, cls, spans) {
    container.textContent = '';
    spans.forEach(function (sp) {
      var s = Math.max(sp.s, st.winStart), e = Math.min(sp.e, st.winEnd);
      if (e < s || e < st.winStart || s > st.winEnd) { return; }
      var el = document.createElement('div');
      el.className = cls;
      el.style.left = pct(s) + '%';
      el.style.width = Math.max(0, pct(e) - pct(s)) + '%';
      if (sp.color) { el.style.backgroundColor = sp.color; }
      el.dataset.start = String(sp.s);
      el.dataset.end = String(sp.e);
      el.title = fmtTime(sp.s, true) + ' – ' + fmtTime(sp.e, true);
      container.appendChild(el);
    });
  }

  function drawTimeline() {
    var spans = [];
    st.segs.forEach(function (sg) {
      var last = spans[spans.length - 1];
      if (last && sg.s - last.e <= 50) { last.e = Math.max(last.e, sg.e); } else { spans.push({ s: sg.s, e: sg.e }); }
    });
    drawSpans($('tl-recorded'), 'tl-rec', spans);
    drawSpans($('tl-ranges'), 'tl-range', cfg.ranges.map(function (r) {
      return { s: r.startMs, e: r.endMs, color: r.color };
    }));
    var day = W > 3600 * 1000;
    $('tl-from').textContent = fmtTime(st.winStart, day);
    $('tl-mid').textContent = fmtTime(st.winStart + W / 2, day);
    $('tl-to').textContent = fmtTime(st.winEnd, day);
    timeline.dataset.from = String(Math.round(st.winStart));
    timeline.dataset.to = String(Math.round(st.winEnd));
    $('window-label').textContent = W >= 86400000 ? '24 h' : W >= 3600000 ? '1 h' : '10 min';
    updateCursor();
  }

  function loadTimeline() {
    var gen = st.gen;
    return fetch(vodURL(st.winStart, st.winEnd), { credentials: 'same-origin' }).then(function (r) {
      return r.ok ? r.text() : '';
    }).then(function (text) {
      if (gen !== st.gen) { return; }
      st.segs = parsePlaylist(text).map(function (f) { return { s: f.pdt, e: f.pdt + f.dur * 1000 }; });
      drawTimeline();
    }).catch(function () { drawTimeline(); });
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
    renewTimer = setTimeout(renewLive, Math.max(1000, ms));
  }

  // retryRenew tries again after a failure or while the camera has no live
  // stream: 5 s, doubling up to a minute.
  function retryRenew() {
    clearTimeout(renewTimer);
    renewRetry = Math.min(renewRetry ? renewRetry * 2 : 5000, 60000);
    renewTimer = setTimeout(renewLive, renewRetry);
  }

  function renewLive() {
    fetch(cfg.liveRenewUrl, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (b) {
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
    loadTimeline();
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
        onPlaying: function () { if (gen === st.gen) { setTransport('webrtc'); } },
        onFail: function (why, wasPlaying) {
          if (gen !== st.gen) { return; }
          st.rtc = null;
          body.dataset.webrtcError = why;
          // A session that played and broke (camera restarted, node
          // left) is tried again; one that never played falls back.
          if (wasPlaying) { goLive(); } else { playLiveHLS(); }
        },
      });
      return;
    }
    playLiveHLS();
  }

  function playLiveHLS() {
    var src = window.vigiaWebRTC ? window.vigiaWebRTC.hlsURL(cfg.liveUrl) : cfg.liveUrl;
    var kind = usable();
    if (!kind) { noPlayer(); return; }
    setTransport('hls');
    if (kind === 'native') { video.src = src; play(); return; }
    var hls = new window.Hls({
      lowLatencyMode: true, backBufferLength: 30,
      xhrSetup: function (xhr, url) { xhr.open('GET', liveRequestURL(url), true); },
    });
    st.hls = hls;
    hls.on(window.Hls.Events.ERROR, onHlsError);
    hls.on(window.Hls.Events.MANIFEST_PARSED, play);
    hls.loadSource(src);
    hls.attachMedia(video);
  }

  function onHlsError(_, data) {
    if (!data || !data.fatal) { return; }
    if (data.type === window.Hls.ErrorTypes.MEDIA_ERROR && st.hls) { st.hls.recoverMediaError(); return; }
    setState('error');
    say(st.mode === 'live' ? 'Live video failed to load.' : 'The recording failed to load.');
  }

  function goRecorded(ms) {
    stop();
    setMode('recorded');
    setWindowAround(ms);
    var gen = st.gen;
    setState('loading');
    say('');
    var url = vodURL(st.winStart, st.winEnd);
    fetch(url, { credentials: 'same-origin' }).then(function (r) {
      if (r.status === 404) { return null; }
      if (!r.ok) { throw new Error('status ' + r.status); }
      return r.text();
    }).then(function (text) {
      if (gen !== st.gen) { return; }
      var frags = text ? parsePlaylist(text) : [];
      st.segs = frags.map(function (f) { return { s: f.pdt, e: f.pdt + f.dur * 1000 }; });
      drawTimeline();
      if (!frags.length) {
        setState('no-recordings');
        say('No recordings in this period.');
        return;
      }
      st.frags = frags;
      var kind = usable();
      if (!kind) { noPlayer(); return; }
      var pos = posForWall(ms);
      if (pos === null) { pos = frags[frags.length - 1].start; }
      if (kind === 'native') {
        video.src = url;
        video.addEventListener('loadedmetadata', function once() {
          video.removeEventListener('loadedmetadata', once);
          video.currentTime = pos;
          play();
        });
        setState('recorded');
        return;
      }
      var hls = new window.Hls({ autoStartLoad: false, maxBufferLength: 30 });
      st.hls = hls;
      hls.on(window.Hls.Events.ERROR, onHlsError);
      hls.on(window.Hls.Events.LEVEL_LOADED, function () {
        var hf = fragsFromHls();
        if (hf && hf.length) { st.frags = hf; }
        var p = posForWall(ms);
        hls.startLoad(p === null ? pos : p);
      });
      hls.on(window.Hls.Events.LEVEL_UPDATED, function () {
        var hf = fragsFromHls();
        if (hf && hf.length) { st.frags = hf; }
      });
      hls.on(window.Hls.Events.MANIFEST_PARSED, play);
      hls.loadSource(url);
      hls.attachMedia(video);
      setState('recorded');
    }).catch(function () {
      if (gen !== st.gen) { return; }
      setState('error');
      say('The recordings could not be listed.');
    });
  }

  function seekWall(ms) {
    if (ms >= now() - 5000 && cfg.liveUrl) { goLive(); return; }
    if (st.mode === 'recorded' && st.frags.length && ms >= st.winStart && ms <= st.winEnd) {
      var pos = posForWall(ms);
      if (pos !== null) { video.currentTime = pos; play(); updateCursor(); return; }
    }
    goRecorded(ms);
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
    st.winEnd -= W; st.winStart -= W; st.gen++; loadTimeline();
  });
  $('next').addEventListener('click', function () {
    st.winEnd = Math.min(now(), st.winEnd + W); st.winStart = st.winEnd - W; st.gen++; loadTimeline();
  });
  $('fullscreen').addEventListener('click', function () {
    var el = $('player');
    if (document.fullscreenElement) { document.exitFullscreen(); } else if (el.requestFullscreen) { el.requestFullscreen(); }
  });
  timeline.addEventListener('click', function (ev) {
    var r = timeline.getBoundingClientRect();
    if (r.width <= 0) { return; }
    seekWall(st.winStart + ((ev.clientX - r.left) / r.width) * W);
  });
  video.addEventListener('timeupdate', updateCursor);
  video.addEventListener('error', function () {
    // Native HLS cannot renew the token of a running stream: reopen it with
    // the newest URL.
    if (st.mode === 'live' && !st.hls && !st.rtc && cfg.liveUrl && usable() === 'native') { playLiveHLS(); }
  });
  video.addEventListener('playing', function () { body.dataset.playing = '1'; });
  video.addEventListener('ended', function () {
    if (st.mode !== 'recorded') { return; }
    if (st.winEnd < now() - 5000) { goRecorded(st.winEnd); } else if (cfg.liveUrl) { goLive(); }
  });
  setInterval(function () {
    if (st.mode === 'live') { setWindowAround(now()); loadTimeline(); }
  }, 60000);

  window.vigiaPlayer = { seekWall: seekWall, goLive: goLive, goRecorded: goRecorded, wall: currentWall };
  body.dataset.liveExp = String(liveExpMs(cfg.liveUrl));
  scheduleRenew();
  if (cfg.live) { goLive(); } else { goRecorded(cfg.startMs); }
})();
