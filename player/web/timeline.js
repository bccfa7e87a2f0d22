// Vigia player timeline: the recorded spans of the visible window, the gaps
// shaded by cause (the cause on hover), the camera's event markers, the
// highlight ranges, the playing position, and a strip of minute
// thumbnails around the pointer while it moves over the timeline (or drags
// along it). Data comes from the timeline and thumbnails addresses of the
// page's configuration; nothing here writes HTML from data (textContent,
// attributes and style properties only). player.js drives it through
// window.VigiaTimeline.
(function () {
  'use strict';

  // Gap causes (docs/recording.md, Gaps): the text shown on hover and the
  // shade.
  var CAUSES = {
    camera_offline: ['Camera offline', 'rgba(229, 57, 53, 0.85)'],
    camera_auth: ['Camera refused the credentials', 'rgba(142, 36, 170, 0.85)'],
    stream_unsupported: ['Stream not supported', 'rgba(121, 85, 72, 0.85)'],
    camera_changed: ['Camera settings changed', 'rgba(120, 144, 156, 0.85)'],
    rtp_loss: ['Video lost on the network', 'rgba(251, 140, 0, 0.85)'],
    queue_overflow: ['Recorder overloaded', 'rgba(244, 81, 30, 0.85)'],
    node_handover: ['Moved between recorders', 'rgba(30, 136, 229, 0.85)'],
    node_crash: ['Recorder crashed', 'rgba(216, 27, 96, 0.85)'],
    upload_failed: ['Storage refused the video', 'rgba(253, 216, 53, 0.85)'],
    spool_quota: ['Recorder spool full', 'rgba(192, 202, 51, 0.85)'],
    camera_blocked: ['Camera blocked', 'rgba(93, 64, 55, 0.85)'],
    camera_removed: ['Camera removed', 'rgba(69, 90, 100, 0.85)'],
    retention: ['Older than the retention period', 'rgba(55, 71, 79, 0.85)'],
    unknown: ['No record of why', 'rgba(97, 97, 97, 0.85)'],
  };
  var EVENT_COLORS = { 1: '#ff7043', 2: '#f44336', 4: '#ab47bc', 5: '#ffee58', 7: '#26c6da', 13: '#ec407a' };
  var STRIP = 5; // thumbnails in the preview strip

  function causeOf(c) { return CAUSES[c] || CAUSES.unknown; }

  function Timeline(o) {
    var el = o.el, cfg = o.cfg, fmt = o.fmtTime, $ = function (id) { return document.getElementById(id); };
    var st = { start: 0, end: 0, data: null, gen: 0, hours: {}, dragging: false };

    function width() { return st.end - st.start; }
    function pct(ms) { return ((ms - st.start) / width()) * 100; }
    function msAt(clientX) {
      var r = el.getBoundingClientRect();
      if (r.width <= 0) { return null; }
      return st.start + Math.min(1, Math.max(0, (clientX - r.left) / r.width)) * width();
    }

    function withRange(base, from, to) {
      var u = new URL(base, location.href);
      u.searchParams.set('from', String(Math.floor(from)));
      u.searchParams.set('to', String(Math.ceil(to)));
      return u.toString();
    }

    // place draws one span of the window into container, or nothing when
    // it lies outside.
    function place(container, cls, s, e) {
      var a = Math.max(s, st.start), b = Math.min(e, st.end);
      if (b <= a) { return null; }
      var d = document.createElement('div');
      d.className = cls;
      d.style.left = pct(a) + '%';
      d.style.width = Math.max(0, pct(b) - pct(a)) + '%';
      d.dataset.start = String(s);
      d.dataset.end = String(e);
      container.appendChild(d);
      return d;
    }

    function draw() {
      var rec = $('tl-recorded'), gaps = $('tl-gaps'), evs = $('tl-events'), ranges = $('tl-ranges');
      rec.textContent = ''; gaps.textContent = ''; evs.textContent = ''; ranges.textContent = '';
      var data = st.data || { recorded: [], gaps: [], events: [] };
      data.recorded.forEach(function (sp) {
        var d = place(rec, 'tl-rec', sp.start_ms, sp.end_ms);
        if (d) { d.title = 'Recorded ' + fmt(sp.start_ms, true) + ' – ' + fmt(sp.end_ms, true); }
      });
      // Video older than history_days is video kept around events.
      var keptTo = data.retained_from_ms || 0;
      data.recorded.forEach(function (sp) {
        if (sp.start_ms >= keptTo) { return; }
        var d = place(rec, 'tl-rec tl-kept', sp.start_ms, Math.min(sp.end_ms, keptTo));
        if (d) { d.dataset.kept = '1'; d.title = 'Kept around events ' + fmt(sp.start_ms, true) + ' – ' + fmt(Math.min(sp.end_ms, keptTo), true); }
      });
      data.gaps.forEach(function (g) {
        var c = causeOf(g.cause);
        var d = place(gaps, 'tl-gap', g.start_ms, g.end_ms);
        if (!d) { return; }
        d.dataset.cause = g.cause;
        d.style.backgroundColor = c[1];
        d.title = c[0] + ': ' + fmt(g.start_ms, true) + ' – ' + fmt(g.end_ms, true);
      });
      data.events.forEach(function (ev) {
        if (ev.at_ms < st.start || ev.at_ms > st.end) { return; }
        var d = document.createElement('div');
        d.className = 'tl-event';
        d.style.left = pct(ev.at_ms) + '%';
        d.style.backgroundColor = EVENT_COLORS[ev.type] || '#fff';
        d.dataset.at = String(ev.at_ms);
        d.dataset.type = String(ev.type);
        if (ev.label) { d.dataset.label = ev.label; }
        d.title = (ev.description || 'event') + (ev.label ? ' ' + ev.label : '') + ' ' + fmt(ev.at_ms, true);
        evs.appendChild(d);
      });
      (cfg.ranges || []).forEach(function (r) {
        var d = place(ranges, 'tl-range', r.startMs, r.endMs);
        if (d && r.color) { d.style.backgroundColor = r.color; }
        if (d) { d.title = fmt(r.startMs, true) + ' – ' + fmt(r.endMs, true); }
      });
      el.dataset.from = String(Math.round(st.start));
      el.dataset.to = String(Math.round(st.end));
      el.dataset.gaps = String(data.gaps.length);
      el.dataset.recordedMs = String(data.recorded_ms || 0);
    }

    // load fetches the timeline of the window; it resolves once drawn.
    function load() {
      var gen = ++st.gen;
      if (!cfg.timelineUrl) { draw(); return Promise.resolve(); }
      return fetch(withRange(cfg.timelineUrl, st.start, st.end), { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (data) {
        if (gen !== st.gen) { return; }
        if (data) { st.data = data; el.dataset.loaded = String(Date.now()); }
        draw();
      }).catch(function () { if (gen === st.gen) { draw(); } });
    }

    function setWindow(start, end) {
      st.start = start;
      st.end = end;
    }

    // ---- preview strip ----
    // Thumbnails are fetched an hour at a time and kept.
    function hourThumbs(hour) {
      if (st.hours[hour]) { return st.hours[hour]; }
      st.hours[hour] = fetch(withRange(cfg.thumbsUrl, hour, hour + 3600000), { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
        return r.ok ? r.json() : [];
      }).catch(function () { return []; });
      return st.hours[hour];
    }

    // thumbAt resolves to the last thumbnail taken at or before ms, within
    // two minutes, or null.
    function thumbAt(ms) {
      var hour = Math.floor(ms / 3600000) * 3600000;
      var wanted = [hourThumbs(hour)];
      if (ms - hour < 120000) { wanted.push(hourThumbs(hour - 3600000)); }
      return Promise.all(wanted).then(function (lists) {
        var best = null;
        lists.forEach(function (list) {
          list.forEach(function (t) {
            var at = t.ts * 1000;
            if (at <= ms && ms - at <= 120000 && (!best || at > best.ts * 1000)) { best = t; }
          });
        });
        return best;
      });
    }

    var strip = $('tl-preview'), stripGen = 0;
    function showStrip(ms, clientX) {
      if (!cfg.thumbsUrl || ms === null) { return; }
      var gen = ++stripGen;
      var step = Math.max(60000, width() / 60);
      var times = [];
      for (var k = -Math.floor(STRIP / 2); k <= Math.floor(STRIP / 2); k++) { times.push(ms + k * step); }
      Promise.all(times.map(thumbAt)).then(function (thumbs) {
        if (gen !== stripGen) { return; }
        strip.textContent = '';
        var shown = 0;
        thumbs.forEach(function (t, i) {
          var cell = document.createElement('figure');
          cell.className = 'tl-thumb' + (i === Math.floor(STRIP / 2) ? ' at' : '');
          if (t) {
            var img = document.createElement('img');
            img.src = t.url;
            img.alt = '';
            img.dataset.ts = String(t.ts);
            cell.appendChild(img);
            shown++;
          }
          var cap = document.createElement('figcaption');
          cap.textContent = fmt(times[i], width() > 3600000);
          cell.appendChild(cap);
          strip.appendChild(cell);
        });
        strip.dataset.ms = String(Math.round(ms));
        strip.dataset.shown = String(shown);
        var r = el.getBoundingClientRect();
        strip.style.left = Math.max(0, Math.min(r.width - strip.offsetWidth, clientX - r.left - strip.offsetWidth / 2)) + 'px';
        strip.hidden = false;
      });
    }
    function hideStrip() { stripGen++; strip.hidden = true; }

    el.addEventListener('pointermove', function (ev) {
      var ms = msAt(ev.clientX);
      showStrip(ms, ev.clientX);
      if (st.dragging && o.onScrub) { o.onScrub(ms); }
    });
    el.addEventListener('pointerdown', function (ev) {
      st.dragging = true;
      if (el.setPointerCapture) { el.setPointerCapture(ev.pointerId); }
    });
    el.addEventListener('pointerup', function () { st.dragging = false; });
    el.addEventListener('pointerleave', function () { if (!st.dragging) { hideStrip(); } });
    el.addEventListener('click', function (ev) {
      var ms = msAt(ev.clientX);
      if (ms !== null && o.onSeek) { o.onSeek(ms); }
    });

    return {
      setWindow: setWindow,
      load: load,
      draw: draw,
      start: function () { return st.start; },
      end: function () { return st.end; },
      data: function () { return st.data; },
      causes: CAUSES,
    };
  }

  window.VigiaTimeline = Timeline;
})();
