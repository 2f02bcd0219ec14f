// What the nodes of the cluster fuzz test (test/integration/cluster-fuzz.test.ts) say in their
// logs: where their replays started, what they quarantined, whether they crashed; and the
// logs of a failed run, kept for whoever reads the failure.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Daemon } from '../daemon.ts';
import { NODES } from './target.ts';

export const alive = (d: Daemon): boolean => d.proc.exitCode === null && d.proc.signalCode === null;

/** The checkpoint sequences this node's replays started from (0: the whole stream was read). */
export const replayedFrom = (d: Daemon): number[] => d.stderr.filter((l) => l.includes('"msg":"stream replayed"')).map((l) => Number(JSON.parse(l)['checkpointSeq']));

export const quarantinedLines = (d: Daemon): string[] => d.stderr.filter((l) => l.includes('"msg":"stream message quarantined: not a record of this cluster"'));

export const checkpointsMade = (d: Daemon): number => d.stderr.filter((l) => l.includes('"msg":"checkpoint made"')).length;

/** What a crash, or a part of a node dying, leaves in its log: a line that is no log record (a stack), a fatal or one of these. */
const CRASHES = ['the cluster role loop failed', 'worker died; replacing it', 'the compaction child exited', 'a command or tick failed', 'runner process died'];

export const crashLines = (d: Daemon): string[] => d.stderr.filter((l) => {
  if (!l.startsWith('{')) return l.trim() !== '';
  return l.includes('"level":60') || CRASHES.some((c) => l.includes(`"msg":"${c}`));
});

/**
 * Writes the logs of every node started (three a start, in order) outside the test's temporary
 * directories, which go at exit: tickd-fuzz-<seed>-<start>-<node>.log. Says where on stdout.
 */
export function keepLogs(seed: number, started: readonly Daemon[]): void {
  for (const [i, d] of started.entries()) {
    const node = NODES[i % NODES.length]!;
    const start = Math.floor(i / NODES.length) + 1;
    const file = join(tmpdir(), `tickd-fuzz-${seed}-${start}-${node}.log`);
    writeFileSync(file, `${d.stderr.join('\n')}\n`);
    console.log(`      ${node}, start ${start} (${alive(d) ? 'alive' : `exited ${d.proc.exitCode ?? d.proc.signalCode}`}): its log is in ${file}`);
  }
}
