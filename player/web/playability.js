// Vigia player: saying what this browser cannot play, never a silent black
// frame. window.vigiaPlayability tells whether the browser decodes H.265
// (hevc(): through Media Source Extensions or over WebRTC) and shows why a
// stream does not play: show(reason, text) writes text over the video (the
// #unplayable box) and the reason in document.body.dataset.unplayable;
// clear() removes both. Reasons:
//
//   h265                the camera sends H.265 and this browser decodes it
//                       neither in MSE nor over WebRTC;
//   codec               the browser refused the stream's codec (codec named
//                       in document.body.dataset.unplayableCodec);
//   transcode-capacity  the node has no room for one more H.264 transcode;
//   stalled             no picture (readyState 0) for stallMs after playback
//                       was asked for.
//
// fromRefusal(status, text) and fromHlsError(data) map a node's WHEP
// refusal and an hls.js error to a reason (or ''); watch(video) arms the
// stall timer of one playback attempt.
(function () {
  'use strict';

  // Codec strings asked of MSE: Main profile, level 3.1 to 5.1, both
  // sample entries (hvc1: parameter sets in the init segment, hev1: in band).
  var HEVC_TYPES = ['video/mp4; codecs="hvc1.1.6.L93.B0"', 'video/mp4; codecs="hev1.1.6.L93.B0"',
    'video/mp4; codecs="hvc1.1.6.L153.B0"'];

  function mseHEVC() {
    var MS = window.ManagedMediaSource || window.MediaSource;
    if (!MS || !MS.isTypeSupported) { return false; }
    return HEVC_TYPES.some(function (t) { return MS.isTypeSupported(t); });
  }

  function rtcHEVC() {
    if (!window.RTCRtpReceiver || !RTCRtpReceiver.getCapabilities) { return false; }
    var caps = RTCRtpReceiver.getCapabilities('video');
    return !!caps && caps.codecs.some(function (c) { return /^video\/h265$/i.test(c.mimeType); });
  }

  // hevc reports where this browser decodes H.265: {mse, rtc, any}.
  function hevc() {
    var m = mseHEVC(), r = rtcHEVC();
    return { mse: m, rtc: r, any: m || r };
  }

  var TEXT = {
    h265: 'This camera sends H.265 (HEVC) video, which this browser cannot decode. ' +
      'Open it in a browser with H.265 support (e.g. Safari, Edge or Chrome with hardware decoding, Firefox on Linux), ' +
      'or ask the administrator to enable H.264 conversion.',
    codec: 'This browser cannot decode this camera\u2019s video format.',
    'transcode-capacity': 'This camera sends H.265 (HEVC), which this browser cannot decode, and the server is ' +
      'already converting as many cameras to H.264 as it can. Try again later or use a browser with H.265 support.',
    stalled: 'No picture arrived',
  };

  function box() {
    var el = document.getElementById('unplayable');
    if (el) { return el; }
    el = document.createElement('div');
    el.id = 'unplayable';
    el.setAttribute('role', 'alert');
    el.hidden = true;
    var stage = document.getElementById('stage') || document.body;
    stage.appendChild(el);
    return el;
  }

  // show writes reason's message (or text) over the video and the reason
  // in the page's dataset.
  function show(reason, text) {
    var el = box();
    var codec = document.body.dataset.unplayableCodec;
    el.textContent = text || (TEXT[reason] ? TEXT[reason] + (reason === 'codec' && codec ? ' (' + codec + ').' : '') : reason);
    el.hidden = false;
    document.body.dataset.unplayable = reason;
  }

  function clear() {
    var el = document.getElementById('unplayable');
    if (el) { el.hidden = true; el.textContent = ''; }
    delete document.body.dataset.unplayable;
    delete document.body.dataset.unplayableCodec;
  }

  // fromRefusal maps a WHEP answer the node refused to a reason: 406 for a
  // camera in H.265 the offer lacks (when this browser cannot decode H.265
  // through MSE either), 503 naming the transcode capacity.
  function fromRefusal(status, text) {
    text = String(text || '');
    if (status === 406 && /h\.?265|hevc/i.test(text) && !mseHEVC()) { return 'h265'; }
    if (status === 503 && /transcode/i.test(text) && /capacity|limit|busy/i.test(text) && !mseHEVC()) { return 'transcode-capacity'; }
    return '';
  }

  // codecName reads the codec out of an hls.js error: its MIME type or
  // message.
  function codecName(data) {
    var parts = [data.mimeType, data.reason, data.error && data.error.message];
    if (data.sourceBufferName && data.mimeType) { parts.push(data.sourceBufferName); }
    var s = parts.filter(Boolean).join(' ');
    var m = /codecs?="?([A-Za-z0-9.]+)/.exec(s);
    return m ? m[1] : s;
  }

  // fromHlsError maps an hls.js error to a reason: the browser refused the
  // codec of the playlist or of its segments.
  function fromHlsError(data) {
    if (!data || !window.Hls) { return ''; }
    var D = window.Hls.ErrorDetails;
    var codecErr = data.details === D.MANIFEST_INCOMPATIBLE_CODECS_ERROR ||
      data.details === D.BUFFER_INCOMPATIBLE_CODECS_ERROR || data.details === D.BUFFER_ADD_CODEC_ERROR;
    if (!codecErr) { return ''; }
    var c = codecName(data);
    // A track other than the video failing to attach leaves the picture.
    if (!data.fatal && data.sourceBufferName && data.sourceBufferName !== 'video' && !/hvc1|hev1|avc1|avc3/i.test(c)) { return ''; }
    if (/hvc1|hev1|hevc|h265/i.test(c) && !mseHEVC()) { return 'h265'; }
    document.body.dataset.unplayableCodec = c;
    return 'codec';
  }

  // watch arms a stall timer: when the video still has no data
  // (readyState 0) after opts.stallMs (10 s), opts.onStall() is called,
  // which returns the reason to show (or '' to show none). The returned
  // function disarms it.
  function watch(video, opts) {
    opts = opts || {};
    var ms = opts.stallMs || 10000;
    var t = setTimeout(function () {
      if (video.readyState !== 0 || document.body.dataset.unplayable) { return; }
      var reason = opts.onStall ? opts.onStall() : 'stalled';
      if (reason === 'stalled') {
        show('stalled', TEXT.stalled + ' within ' + Math.round(ms / 1000) + ' s: the camera or the network may be down.');
      } else if (reason) {
        show(reason);
      }
    }, ms);
    return function () { clearTimeout(t); };
  }

  window.vigiaPlayability = {
    hevc: hevc, show: show, clear: clear, fromRefusal: fromRefusal, fromHlsError: fromHlsError, watch: watch,
  };
})();
