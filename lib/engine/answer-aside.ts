// Commands of a batch that the primary answers itself, beside the engine or the leader: GET
// /metrics (this node's own metrics, which take an asynchronous collection) and, in cluster
// mode, GET /cluster (this node's own view, lib/leadership/local-ops.ts). The others go on as a
// batch; the replies come back in the batch's order, once all are ready: at once when every
// answer was synchronous and the batch was answered at once. A batch with none of them goes on
// untouched.
import type { Command, Reply } from '../domain/command.ts';

export type BatchFn = (cmds: readonly Command[], done: (replies: Reply[]) => void) => void;

export function answerAside(
  cmds: readonly Command[],
  aside: (cmd: Command) => boolean,
  answer: (cmd: Command) => Reply | Promise<Reply>,
  rest: BatchFn,
  done: (replies: Reply[]) => void,
): void {
  if (!cmds.some(aside)) return rest(cmds, done);
  const replies = new Array<Reply>(cmds.length);
  const others: Command[] = [];
  const otherAt: number[] = [];
  // One for this call itself, released at its end, so that answers settled synchronously
  // cannot finish the batch before every command was looked at.
  let pending = 1;
  const settled = (): void => {
    if (--pending === 0) done(replies);
  };
  cmds.forEach((cmd, i) => {
    if (!aside(cmd)) {
      others.push(cmd);
      otherAt.push(i);
      return;
    }
    const reply = answer(cmd);
    if (!(reply instanceof Promise)) {
      replies[i] = reply;
      return;
    }
    pending++;
    reply.then(
      (r) => { replies[i] = r; },
      () => { replies[i] = { ok: false, code: 'internal', message: '' }; },
    ).then(settled);
  });
  if (others.length > 0) {
    pending++;
    rest(others, (got) => {
      got.forEach((reply, k) => { replies[otherAt[k]!] = reply; });
      settled();
    });
  }
  settled();
}
