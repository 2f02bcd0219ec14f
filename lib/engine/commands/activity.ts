// GET /activity: the per-second activity of the last minutes (lib/engine/activity.ts), a read
// like STAT: in cluster mode followers forward it, so it is the leader's, which fires the jobs.
// 'metrics' never reaches an engine: the primary answers it itself with this node's own
// metrics (cluster/primary.ts). The handler is here because every command has one.
import { fail } from '../../errors.ts';
import type { Handler } from './context.ts';

export const activity: Handler<'activity'> = (ctx) => ({ ok: true, kind: 'activity', activity: ctx.activity() });

export const metrics: Handler<'metrics'> = () => fail('not_found', 'metrics are answered by the node itself');
