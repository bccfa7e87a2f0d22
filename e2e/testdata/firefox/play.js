// play.js opens pages in Debian's firefox-esr, headless, driven over
// WebDriver BiDi by puppeteer-core, and reports how each page's video
// plays. It is run by the e2e Firefox tests.
//
//   node play.js FIREFOX CASES_JSON
//
// CASES_JSON is a list of {name, url, want, timeoutMs}: each page is
// opened in turn in one browser and watched until its video's currentTime
// has advanced want seconds (3) or timeoutMs (25000) has passed. One JSON
// line per case goes to stdout: name, transport, rendition, unplayable,
// webrtcError, webrtcSessions (WHEP sessions the page opened), time advanced, firstFrameMs (from the start of the
// navigation to the first time currentTime moved), ok.
'use strict';

const puppeteer = require('puppeteer-core');

const READ = `(() => { const v = document.getElementById('video'), d = document.body.dataset;
  return {transport: d.transport || '', rendition: d.rendition || '', unplayable: d.unplayable || '',
    webrtcError: d.webrtcError || '', webrtcSessions: Number(d.webrtcSessions || 0), time: v ? v.currentTime : 0, ready: v ? v.readyState : 0,
    hevc: window.vigiaPlayability ? window.vigiaPlayability.hevc() : null,
    rtcCodecs: window.vigiaWebRTC ? window.vigiaWebRTC.videoCodecs() : null}; })()`;

async function watch(page, c) {
  const want = c.want || 3, timeoutMs = c.timeoutMs || 25000;
  const started = Date.now();
  await page.goto(c.url, { waitUntil: 'load' });
  let first = null, firstFrameMs = 0, s = null;
  for (;;) {
    s = await page.evaluate(READ);
    if (first === null && s.time > 0) {
      first = s.time;
      firstFrameMs = Date.now() - started;
    }
    if (first !== null && s.time - first >= want) { break; }
    if (s.unplayable || Date.now() - started > timeoutMs) { break; }
    await new Promise((r) => setTimeout(r, 50));
  }
  return Object.assign({ name: c.name, advanced: first === null ? 0 : s.time - first, firstFrameMs,
    ok: first !== null && s.time - first >= want }, s);
}

(async () => {
  const [firefox, cases] = [process.argv[2], JSON.parse(process.argv[3])];
  const browser = await puppeteer.launch({
    browser: 'firefox', protocol: 'webDriverBiDi', executablePath: firefox, headless: true,
    extraPrefsFirefox: {
      'media.autoplay.default': 0, // allowed: the player starts muted video itself
      'media.gmp-manager.url': '', // no plugin downloads (OpenH264) during a test
    },
  });
  try {
    const page = await browser.newPage();
    page.on('console', (m) => process.stderr.write('console: ' + m.text() + '\n'));
    for (const c of cases) {
      process.stdout.write(JSON.stringify(await watch(page, c)) + '\n');
    }
  } finally {
    await browser.close();
  }
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });
