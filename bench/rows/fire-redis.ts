// Row 4b: fire rate of a redis RPUSH rule (127.0.0.1:6379, a new connection per execution as
// the spec says): 10 000 jobs all due at one instant, jobs/s until STAT says all have run.
// Skipped, with a note, when no Redis answers there. The list is checked and deleted after.
import { randomBytes } from 'node:crypto';
import { canConnect } from '../../test/helpers/services.ts';
import { fireRate } from '../lib/fire.ts';
import { listLengthThenDelete, REDIS_URL } from '../lib/redis-list.ts';
import type { Figure, Row } from '../lib/suite.ts';

const COUNT = 10_000;
const LABEL = `fire rate, redis RPUSH to 127.0.0.1:6379, ${COUNT.toLocaleString('en')} jobs due at once`;

export const row: Row = {
  name: 'fire-redis',
  title: 'fire rate, redis RPUSH rule to 127.0.0.1:6379, 10 000 jobs due at once',
  run: async (opts): Promise<Figure[]> => {
    if (!(await canConnect('127.0.0.1', 6379))) return [{ label: LABEL, value: null, unit: 'jobs/s', note: 'skipped: no Redis answers at 127.0.0.1:6379' }];
    const key = `tickd-bench:${randomBytes(8).toString('hex')}`;
    let length = 0;
    let r;
    try {
      r = await fireRate('fire-redis', COUNT, `redis ${REDIS_URL} RPUSH ${key}`, opts.progress);
    } finally {
      length = await listLengthThenDelete(key);
    }
    return [{
      label: LABEL,
      value: r.jobsPerSecond,
      unit: 'jobs/s',
      note: `all ran in ${r.seconds.toFixed(2)} s (STAT polled every 100 ms, slowest STAT answer ${(r.worstStatMs / 1000).toFixed(2)} s); ${r.executed} executed, ${r.failed} failed; the list held ${length}`,
    }];
  },
};
