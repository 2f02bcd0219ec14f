// Commands of a batch that the primary answers itself, beside the engine or the leader
// (GET /metrics: this node's own metrics, which take an asynchronous collection). The others
// go on as a batch; the replies come back in the batch's order, once all are ready. A batch
// with none of them goes on untouched.
import type { Command, Reply } from '../domain/command.ts';

export type BatchFn = (cmds: readonly Command[], done: (replies: Reply[]) => void) => void;

export function answerAside(
  cmds: readonly Command[],
  aside: (cmd: Command) => boolean,
  answer: (cmd: Command) => Promise<Reply>,
  rest: BatchFn,
  done: (replies: Reply[]) => void,
): void {
  if (!cmds.some(aside)) return rest(cmds, done);
  const replies = new Array<Reply>(cmds.length);
  const others: Command[] = [];
  const otherAt: number[] = [];
  const answers: Promise<void>[] = [];
  cmds.forEach((cmd, i) => {
    if (aside(cmd)) {
      answers.push(answer(cmd).then(
        (reply) => { replies[i] = reply; },
        () => { replies[i] = { ok: false, code: 'internal', message: '' }; },
      ));
    } else {
      others.push(cmd);
      otherAt.push(i);
    }
  });
  if (others.length > 0) {
    answers.push(new Promise<void>((resolve) => rest(others, (got) => {
      got.forEach((reply, k) => { replies[otherAt[k]!] = reply; });
      resolve();
    })));
  }
  void Promise.all(answers).then(() => done(replies));
}
