// The process of a SinkProcess (sink-process.ts): an HttpSink (sink.ts) and nothing else, so
// that the arrival times it records are not delayed by the bench's own work (the load it
// generates, its garbage). It answers its parent's questions over IPC and sends nothing while
// requests arrive.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { HttpSink } from './sink.ts';
import type { FromSink, ToSink } from './sink-process.ts';

const send = (msg: FromSink): void => { process.send?.(msg); };

const sink = await HttpSink.start();
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
let collected = 0;

process.on('disconnect', () => { void sink.close().finally(() => process.exit(0)); });
process.on('message', (msg: ToSink) => {
  switch (msg.t) {
    case 'count':
      send({ t: 'count', id: msg.id, received: sink.received });
      return;
    case 'wait':
      void sink.waitFor(msg.n, msg.timeoutMs).then((ok) => send({ t: 'waited', id: msg.id, ok }));
      return;
    case 'collect': {
      // The arrivals since the last collect, and how long this loop stalled meanwhile.
      const arrivals = sink.arrivals.slice(collected);
      collected = sink.arrivals.length;
      send({ t: 'collected', id: msg.id, arrivals, malformed: sink.malformed, stallMs: loop.max / 1e6 });
      loop.reset();
      return;
    }
  }
});
send({ t: 'ready', url: sink.url });
