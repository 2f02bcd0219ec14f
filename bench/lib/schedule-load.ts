// Schedules for the schedule rows (issue 37, item 11), loaded the two ways a daemon gets them:
// pipelined `SCHEDULE SET` lines over TCP (as pipeline.ts pipelines SETs: N connections, each
// writing as fast as the socket takes it and counting reply lines), or a logfile written
// directly with the daemon's own encoder, for a replay bigger than loading through a daemon
// would allow in a bench's time. Schedule ids are `<prefix>.<connection>.<i>` (TCP) or
// `<prefix>.<i>` (logfile). A reply carrying ERROR is counted, and loadSchedules throws on any:
// a refused load must not pass for a measured one.
import { Calendar } from '../../lib/schedule/calendar.ts';
import { createWriteStream } from 'node:fs';
import { connect } from 'node:net';
import type { Address } from '../../test/helpers/daemon.ts';
import type { ScheduleState } from '../../lib/domain/schedule.ts';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import { readSchedule } from '../../lib/schedule/spec.ts';

const ERROR_MARK = Buffer.from(' ERROR');
const BATCH = 2000;

export interface ScheduleLoad {
  readonly seconds: number;
  readonly perSecond: number;
}

/**
 * `connections` x `count` `SCHEDULE SET <prefix>.<c>.<i> <options>` lines, pipelined; resolves
 * when every one is answered. `options` is the text after the id, as TCP takes it
 * (`every=1m`, `"cron=0 0 1 1 *"`).
 */
export async function loadSchedules(addr: Address, connections: number, count: number, prefix: string, options: string): Promise<ScheduleLoad> {
  let errors = 0;
  let firstError = '';
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, (_, c) => new Promise<void>((resolve, reject) => {
    const socket = connect(addr.port, addr.host);
    let received = 0;
    socket.on('error', reject);
    socket.on('close', () => { if (received < count) reject(new Error(`connection closed after ${received} of ${count} replies`)); });
    socket.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) received++;
      for (let i = chunk.indexOf(ERROR_MARK); i !== -1; i = chunk.indexOf(ERROR_MARK, i + 1)) {
        if (errors++ === 0) firstError = chunk.subarray(i, chunk.indexOf(10, i)).toString();
      }
      if (received >= count) { socket.destroy(); resolve(); }
    });
    socket.on('connect', () => {
      let i = 0;
      const pump = (): void => {
        while (i < count) {
          const parts: string[] = [];
          const end = Math.min(count, i + BATCH);
          for (; i < end; i++) parts.push(`${i} SCHEDULE SET ${prefix}.${c}.${i} ${options}\n`);
          if (!socket.write(parts.join(''))) { socket.once('drain', pump); return; }
        }
      };
      pump();
    });
  })));
  const seconds = (performance.now() - started) / 1000;
  if (errors > 0) throw new Error(`${errors} of ${connections * count} SCHEDULE SETs were answered ERROR (first:${firstError})`);
  return { seconds, perSecond: (connections * count) / seconds };
}

/**
 * Writes `count` schedule records (type 5) to `path`, as a daemon would have after `count`
 * SCHEDULE SETs at `decidedNs` with nothing fired yet: each state fresh (no fires, no skips).
 * Schedule i has the fields `specs[i % specs.length]` (the HTTP body's terms), each spec read
 * once by readSchedule as the daemon reads it (a cron expression costs tens of µs to check).
 * Returns the file's size in bytes.
 */
export async function writeScheduleLogfile(path: string, count: number, prefix: string, decidedNs: bigint, specs: ReadonlyArray<Record<string, unknown>>): Promise<number> {
  const templates = specs.map((fields) => {
    const read = readSchedule(`${prefix}.0`, fields);
    if (!('schedule' in read)) throw new Error(`${JSON.stringify(fields)} refused: ${read.field}: ${read.error}`);
    return read.schedule;
  });
  // What the daemon keeps with each state: the calendar's next nominal time after `decided`.
  const nexts = templates.map((t) => new Calendar(t).after(decidedNs));
  const out = createWriteStream(path);
  let bytes = 0;
  const written = new Promise<void>((resolve, reject) => { out.on('finish', resolve); out.on('error', reject); });
  for (let i = 0; i < count;) {
    const frames: Buffer[] = [];
    for (const end = Math.min(count, i + BATCH); i < end; i++) {
      const state: ScheduleState = {
        schedule: { ...templates[i % templates.length]!, id: `${prefix}.${i}` },
        decided: decidedNs, next: nexts[i % templates.length]!, fired: 0, skippedMissed: 0, skippedOverlap: 0, held: null, fires: [], manual: [], skips: [],
      };
      frames.push(encodeRecord({ t: 'schedule', state }));
    }
    const chunk = Buffer.concat(frames);
    bytes += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await written;
  return bytes;
}
