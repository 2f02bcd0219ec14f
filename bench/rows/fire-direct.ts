// Row 3: fire rate of a `direct /bin/true` rule: N jobs all due at one instant, jobs/s from
// that instant until STAT jobs_executed (+ failed) reaches N. Process spawning bounds it (a
// few hundred per second on a small VM), so the full size (50 000) takes minutes: the suite
// uses 5 000 unless --full is given; the row run alone uses 50 000 unless --quick is given.
import { fireRate } from '../lib/fire.ts';
import type { Row } from '../lib/suite.ts';

export const row: Row = {
  name: 'fire-direct',
  title: 'fire rate, direct /bin/true rule, 50 000 jobs due at once (5 000 with --quick)',
  sized: true,
  run: async (opts) => {
    const count = opts.full ? 50_000 : 5_000;
    const r = await fireRate('fire-direct', count, 'direct /bin/true', opts.progress);
    return [{
      label: `fire rate, direct /bin/true, ${count.toLocaleString('en')} jobs due at once${opts.full ? '' : ' (quick size)'}`,
      value: r.jobsPerSecond,
      unit: 'jobs/s',
      note: `all ran in ${r.seconds.toFixed(1)} s (STAT polled every 100 ms, slowest STAT answer ${(r.worstStatMs / 1000).toFixed(2)} s); ${r.executed} executed, ${r.failed} failed`,
    }];
  },
};
