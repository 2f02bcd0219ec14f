// Row 4a: fire rate of an http rule (POST to a node:http sink in the bench process): 10 000
// jobs all due at one instant, jobs/s until STAT says all have run. The sink shares the
// bench process, and both share the two cores with the daemon.
import { fireRate } from '../lib/fire.ts';
import { HttpSink } from '../lib/sink.ts';
import type { Row } from '../lib/suite.ts';

const COUNT = 10_000;

export const row: Row = {
  name: 'fire-http',
  title: 'fire rate, http POST rule to a local sink, 10 000 jobs due at once',
  run: async (opts) => {
    const sink = await HttpSink.start();
    try {
      const r = await fireRate('fire-http', COUNT, `http POST ${sink.url}`, opts.progress);
      return [{
        label: `fire rate, http POST to a local sink, ${COUNT.toLocaleString('en')} jobs due at once`,
        value: r.jobsPerSecond,
        unit: 'jobs/s',
        note: `all ran in ${r.seconds.toFixed(2)} s (STAT polled every 100 ms, slowest STAT answer ${(r.worstStatMs / 1000).toFixed(2)} s); ${r.executed} executed, ${r.failed} failed; the sink saw ${sink.received}`,
      }];
    } finally {
      await sink.close();
    }
  },
};
