// Pipelined protocol load: N connections each send `count` SETs as fast as the socket takes
// them and count reply lines; the figure is total replies / wall time. Job ids are
// `<prefix>.<connection>.<i>`, so two calls with the same prefix overwrite the same jobs.
// By default every job is due in 2096 (never fires during a run); `at` picks other times.
// Reply lines that carry ERROR are counted, so a load that was refused cannot pass for speed.
import { connect } from 'node:net';
import type { Address } from '../../test/helpers/daemon.ts';

export const FAR_FUTURE_NS = 4_000_000_000_000_000_000n;

export interface PipelineResult {
  readonly perSecond: number;
  readonly seconds: number;
  readonly errors: number;
}

const ERROR_MARK = Buffer.from(' ERROR');

function countErrors(chunk: Buffer): number {
  let n = 0;
  for (let i = chunk.indexOf(ERROR_MARK); i !== -1; i = chunk.indexOf(ERROR_MARK, i + 1)) n++;
  return n;
}

export async function pipelinedSets(
  addr: Address, connections: number, count: number, prefix = 'b',
  at: (connection: number, i: number) => bigint = (_c, i) => FAR_FUTURE_NS + BigInt(i),
): Promise<PipelineResult> {
  let errors = 0;
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: connections }, (_, c) => new Promise<void>((resolve, reject) => {
    const socket = connect(addr.port, addr.host);
    let received = 0;
    socket.on('error', reject);
    socket.on('close', () => { if (received < count) reject(new Error(`connection closed after ${received} of ${count} replies`)); });
    socket.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) received++;
      errors += countErrors(chunk);
      if (received >= count) { socket.destroy(); resolve(); }
    });
    socket.on('connect', () => {
      let i = 0;
      const pump = (): void => {
        while (i < count) {
          const parts: string[] = [];
          const end = Math.min(count, i + 2000);
          for (; i < end; i++) parts.push(`${i} SET ${prefix}.${c}.${i} ${at(c, i)}\n`);
          if (!socket.write(parts.join(''))) { socket.once('drain', pump); return; }
        }
      };
      pump();
    });
  })));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { perSecond: (connections * count) / seconds, seconds, errors };
}

/** pipelinedSets for loading state: throws if any SET was refused. */
export async function loadSets(addr: Address, connections: number, count: number, prefix: string, at?: (connection: number, i: number) => bigint): Promise<PipelineResult> {
  const result = await pipelinedSets(addr, connections, count, prefix, at);
  if (result.errors > 0) throw new Error(`${result.errors} of ${connections * count} SETs were answered ERROR`);
  return result;
}
