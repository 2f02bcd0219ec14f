// Runner throughput benchmark (run: node bench/runners.ts [count]). Pushes `count` (10 000)
// executions through one RunnerPool (maxInflight 256) for each of: an http POST to a node:http
// sink in this same process, a redis RPUSH to 127.0.0.1:6379, and direct /bin/true. Prints
// jobs/s and the failures for each. The http sink shares this process's event loop, so its
// figure is a lower bound on what the runner alone can do. A kind whose service is down is
// reported as skipped.
import { canConnect } from '../test/helpers/services.ts';
import type { RunnerSpec } from '../lib/domain/runner-spec.ts';
import { silentLogger } from '../lib/log.ts';
import { newAttemptId } from '../lib/engine/attempt-id.ts';
import type { RunnerContext } from '../lib/runner/execution.ts';
import { RunnerPool } from '../lib/runner/pool.ts';
import { listLengthThenDelete, REDIS_URL } from './lib/redis-list.ts';
import { HttpSink } from './lib/sink.ts';

const COUNT = Number(process.argv[2] ?? 10_000);
const MAX_INFLIGHT = 256;
const BASE_NS = 1775822400000000000n;
const ctx: RunnerContext = { shellPath: '/bin/sh', shellArgs: ['-c'], timeoutMs: 30_000, log: silentLogger() };

async function fire(label: string, runner: RunnerSpec): Promise<void> {
  let done = 0;
  let failed = 0;
  const finished = Promise.withResolvers<void>();
  const pool = new RunnerPool({
    maxInflight: MAX_INFLIGHT,
    ctx,
    onResult: (_exec, ok) => {
      if (!ok) failed++;
      if (++done === COUNT) finished.resolve();
    },
  });
  const start = process.hrtime.bigint();
  for (let i = 0; i < COUNT; i++) {
    pool.submit({ attempt: newAttemptId(), jobId: `bench.${i}`, execution: BASE_NS + BigInt(i), runner });
  }
  await finished.promise;
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  await pool.stop(0);
  console.log(`${label.padEnd(22)} ${COUNT} executions in ${ms.toFixed(0)} ms: ${(COUNT / ms * 1000).toFixed(0)} jobs/s, ${failed} failed`);
}

async function benchHttp(): Promise<void> {
  const sink = await HttpSink.start();
  try {
    await fire('http POST (local sink)', { type: 'http', method: 'POST', url: sink.url });
    if (sink.received !== COUNT) console.log(`  warning: the sink saw ${sink.received} requests`);
  } finally {
    await sink.close();
  }
}

async function benchRedis(): Promise<void> {
  if (!(await canConnect('127.0.0.1', 6379))) {
    console.log('redis RPUSH            skipped: no Redis at 127.0.0.1:6379');
    return;
  }
  const key = `tickd-bench:${newAttemptId()}`;
  await fire('redis RPUSH', { type: 'redis', url: REDIS_URL, command: 'RPUSH', key });
  const length = await listLengthThenDelete(key);
  if (length !== COUNT) console.log(`  warning: the list held ${length} items`);
}

async function main(): Promise<void> {
  if (!Number.isSafeInteger(COUNT) || COUNT < 1) throw new Error('count must be a positive integer');
  await benchHttp();
  await benchRedis();
  await fire('direct /bin/true', { type: 'direct', executable: '/bin/true', args: [] });
}

await main();
