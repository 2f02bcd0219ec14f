// What a command handler may touch: the stores to read (read-only views), the change tracker
// for every write (it journals and can roll back), the STAT source, the jobs' last attempts
// and the activity window.
import type { ActivityView } from '../../domain/activity.ts';
import type { Command, NodeWait, Reply } from '../../domain/command.ts';
import type { StatValues } from '../../domain/stat.ts';
import type { LastAttempts } from '../../store/attempts.ts';
import type { Changes, ReadonlyJobs, ReadonlyRules } from '../changes.ts';
import type { Scheduling } from '../scheduling.ts';

export interface EngineContext {
  readonly changes: Changes;
  readonly jobs: ReadonlyJobs;
  readonly rules: ReadonlyRules;
  readonly stat: () => StatValues;
  readonly attempts: LastAttempts;
  /** GET /activity: the window ending now. */
  readonly activity: () => ActivityView;
  readonly scheduling: Scheduling;
  /**
   * Null while records that need format `needs` may be written; else why not (cluster mode: a
   * node behind it). Schedules need format 3, a rule with options format 4 (5 with retry.on,
   * 6 with node tags, `on`).
   */
  readonly formatRefused: (needs: number) => string | null;
  /** Cluster mode, on the leader: what job `id`'s attempt waits for, if it waits for a node (lib/placement/). */
  readonly waitingForNode: (id: string) => NodeWait | undefined;
}

export type Handler<Op extends Command['op']> = (ctx: EngineContext, cmd: Extract<Command, { op: Op }>) => Reply;

export const DONE: Reply = { ok: true, kind: 'done' };
