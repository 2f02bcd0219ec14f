// Firing-lateness probes: jobs due at precise wall times on an http rule whose sink (sink.ts)
// records when each request arrives. Lateness = arrival - due time, so it covers the tick,
// dispatch, the runner's HTTP request and the sink's own event loop: an upper bound on the
// scheduler's lateness, never a flattering figure.
import type { Daemon } from '../../test/helpers/daemon.ts';
import { command } from './command.ts';
import { sleep, wallNs } from './harness.ts';
import { loadSets } from './pipeline.ts';
import { latenessMs, type Arrival } from './sink.ts';

/** A rule sending every job under `pattern` to the sink by POST. */
export function probeRule(daemon: Daemon, pattern: string, sink: { readonly url: string }): Promise<void> {
  return command(daemon.tcp, `RULE SET ${pattern}rule ${pattern} http POST ${sink.url}`);
}

/**
 * Due time (ns) of probe i: every `spacingMs` from `leadMs` from now, plus an offset under
 * 1 ms that varies with i (i x 7919 µs mod 1 ms), so that probes do not all sit on the same
 * phase of the 512 Hz tick and the spread sees the whole period.
 */
function probeTimes(leadMs: number, spacingMs: number): (i: number) => bigint {
  const firstNs = wallNs() + BigInt(leadMs) * 1_000_000n;
  const stepNs = BigInt(Math.round(spacingMs * 1e6));
  return (i) => firstNs + BigInt(i) * stepNs + BigInt((i * 7919) % 1000) * 1000n;
}

/**
 * Schedules `count` probes under `pattern` (ending in a dot), due every `spacingMs` starting
 * `leadMs` from now.
 */
export async function scheduleProbes(daemon: Daemon, pattern: string, count: number, leadMs: number, spacingMs: number): Promise<void> {
  const due = probeTimes(leadMs, spacingMs);
  await loadSets(daemon.tcp, 1, count, pattern.slice(0, -1), (_c, i) => due(i));
}

/** The lateness of the arrivals whose job id starts with `pattern`. */
export function latenessOf(arrivals: readonly Arrival[], pattern: string): number[] {
  return arrivals.filter((a) => a.jobId.startsWith(pattern)).map(latenessMs);
}

export interface RollingProbes {
  /** Stops scheduling; resolves with how many were scheduled and when the last is due. */
  stop(): Promise<{ count: number; lastNs: bigint }>;
}

/**
 * Keeps probes coming for as long as it takes (until stop()): batches of 50, due `spacingMs`
 * apart, each batch scheduled about `leadMs` before its first probe is due. For events whose
 * start and length are not known in advance (a compaction).
 */
export function rollingProbes(daemon: Daemon, pattern: string, spacingMs: number, leadMs: number): RollingProbes {
  const BATCH = 50;
  const due = probeTimes(leadMs, spacingMs);
  const leadNs = BigInt(leadMs) * 1_000_000n;
  let running = true;
  let count = 0;
  const loop = (async () => {
    for (let batch = 0; running; batch++) {
      const base = batch * BATCH;
      const waitMs = Number(due(base) - leadNs - wallNs()) / 1e6;
      if (waitMs > 0) await sleep(waitMs);
      await loadSets(daemon.tcp, 1, BATCH, `${pattern}b${batch}`, (_c, i) => due(base + i));
      count += BATCH;
    }
  })();
  // A failure (the daemon died) is reported by stop(), not as an unhandled rejection meanwhile.
  let failure: unknown = null;
  const settled = loop.catch((err: unknown) => { failure = err; });
  return {
    async stop() {
      running = false;
      await settled;
      if (failure !== null) throw failure;
      return { count, lastNs: due(count - 1) };
    },
  };
}

export interface Firing {
  readonly jobId: string;
  readonly executionNs: bigint;
  /** The daemon's own figure: its tick's wall time minus the job's execution time. */
  readonly latenessMs: number;
}

/**
 * The daemon's `job fired` debug log lines (lib/engine/observers.ts) for jobs under `pattern`:
 * lateness as the issue defines it, the time of `triggered` against `execution`, measured
 * inside the primary, so neither the runner nor the bench's event loop is in it.
 */
export function firingsOf(daemon: Daemon, pattern: string): Firing[] {
  const out: Firing[] = [];
  for (const line of daemon.stderr) {
    if (!line.includes('"job fired"')) continue;
    let rec: { job: string; execution: string; lateness_ms: number };
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      // The daemon's processes share one pipe; a line over PIPE_BUF (4 KiB) from one of them can
      // be split by another's: that record is lost to the count, which the row shows.
      continue;
    }
    if (rec.job.startsWith(pattern)) out.push({ jobId: rec.job, executionNs: BigInt(rec.execution), latenessMs: rec.lateness_ms });
  }
  return out;
}
