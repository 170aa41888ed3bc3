// Echo thread for the codec benchmark: sends back what it receives, decoded and re-encoded the way
// the mode says, so each round trip pays the full cost at both ends. Plain JS: no TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { Packr } from 'msgpackr';

// The same options as src/actors/codec.ts.
const packr = new Packr({ useRecords: true, moreTypes: false });
const exact = (view) => {
  const buffer = new ArrayBuffer(view.byteLength);
  new Uint8Array(buffer).set(view);
  return buffer;
};

let mode = 'clone';
parentPort.on('message', (m) => {
  if (typeof m === 'object' && m !== null && m.setMode) {
    mode = m.setMode;
    parentPort.postMessage('ok');
    return;
  }
  switch (mode) {
    case 'clone': // the object arrived deserialized; posting it serializes it again
    case 'string': // a protocol line: no parsing on either side
      return parentPort.postMessage(m);
    case 'json':
      return parentPort.postMessage(JSON.stringify(JSON.parse(m)));
    case 'msgpack': {
      const out = exact(packr.pack(packr.unpack(new Uint8Array(m))));
      return parentPort.postMessage(out, [out]);
    }
  }
});
