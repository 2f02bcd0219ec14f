// 'cluster' never reaches an engine in practice: a single node's HTTP has no GET /cluster, and
// a cluster node answers it from its own state (lib/leadership/local-ops.ts). The handler is
// here because every command has one; a batch that still carried it gets a plain answer.
import { fail } from '../../errors.ts';
import type { Handler } from './context.ts';

export const cluster: Handler<'cluster'> = () => fail('not_found', 'cluster mode is off: this node runs alone');
