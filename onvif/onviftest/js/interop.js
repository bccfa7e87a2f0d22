// Reads a camera with the npm onvif client and prints what it found as
// JSON lines: {"info":…}, {"profiles":…}, {"stream":…}, then one
// {"event":…} line per notification until WANT_TOPIC arrives with
// PropertyOperation Changed. Used by the tests of package onviftest.
'use strict';
const { Cam } = require('onvif');

const [hostname, port, username, password, wantTopic] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const fail = (what, err) => {
	process.stderr.write(what + ': ' + (err && err.message ? err.message : String(err)) + '\n');
	process.exit(1);
};
setTimeout(() => fail('timeout', 'no Changed ' + wantTopic + ' event within 20 s'), 20000).unref();

new Cam({ hostname, port: Number(port), username, password, timeout: 10000 }, function (err) {
	if (err) fail('connect', err);
	this.getDeviceInformation((err, info) => {
		if (err) fail('device information', err);
		out({ info });
		out({ profiles: (this.profiles || []).map((p) => ({ token: p.$.token, name: p.name })) });
		this.getStreamUri({ protocol: 'RTSP', profileToken: this.profiles[0].$.token }, (err, stream) => {
			if (err) fail('stream uri', err);
			out({ stream: stream.uri });
			this.on('eventsError', (e) => fail('events', e));
			this.on('event', (msg) => {
				const topic = msg.topic._;
				const m = msg.message.message;
				let items = m.data && m.data.simpleItem;
				if (items && !Array.isArray(items)) items = [items];
				const data = (items || []).map((i) => i.$);
				out({ event: { topic, op: m.$.PropertyOperation, data } });
				if (topic === wantTopic && m.$.PropertyOperation === 'Changed') process.exit(0);
			});
		});
	});
});
