// Commands a node answers itself, whatever its role (GET /cluster: this node's own view),
// split from a batch whose other commands go to the engine or to the leader; the replies come
// back in the batch's order (lib/engine/answer-aside.ts).
import type { Command, Reply } from '../domain/command.ts';
import { answerAside, type BatchFn } from '../engine/answer-aside.ts';

const isLocal = (cmd: Command): boolean => cmd.op === 'cluster';

export function answerLocally(cmds: readonly Command[], cluster: () => Reply, rest: BatchFn, done: (replies: Reply[]) => void): void {
  answerAside(cmds, isLocal, cluster, rest, done);
}
