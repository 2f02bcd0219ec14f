// Commands a node answers itself, whatever its role (GET /cluster: this node's own view),
// split from a batch whose other commands go to the engine or to the leader; the replies come
// back in the batch's order.
import type { Command, Reply } from '../domain/command.ts';

export function answerLocally(
  cmds: readonly Command[],
  cluster: () => Reply,
  rest: (cmds: readonly Command[], done: (replies: Reply[]) => void) => void,
  done: (replies: Reply[]) => void,
): void {
  let local = 0;
  for (const c of cmds) if (c.op === 'cluster') local++;
  if (local === 0) return rest(cmds, done);
  if (local === cmds.length) return done(cmds.map(() => cluster()));
  const others = cmds.filter((c) => c.op !== 'cluster');
  rest(others, (replies) => {
    let k = 0;
    done(cmds.map((c) => (c.op === 'cluster' ? cluster() : replies[k++]!)));
  });
}
