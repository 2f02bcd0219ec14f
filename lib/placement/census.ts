// A new leader's census (tickd(8) CLUSTER MODE "Where jobs run"): before it runs again the jobs
// the stream shows `triggered`, it asks every node that runs executions what it still runs,
// or ran and holds the result of, so that a leader change re-runs only what ran on a node that
// is gone. A node is asked until it answers or is lost (members.ts): a node merely slow to
// answer is waited for, never given away; so is one nobody listens for (NoResponders): it may
// be cut off from NATS for a moment. So the jobs of a node that died are run again once its
// loss is established, as everywhere else.
import type { HeldAttempt } from './messages.ts';
import { readHeld } from './messages.ts';
import { ask, EXEC_CONTEXT, execSubject, type WireParts } from './wire.ts';

const ASK_WAIT_MS = 2_000;
const AGAIN_MS = 250;

export interface CensusAnswer {
  readonly node: string;
  readonly held: readonly HeldAttempt[];
}

/** The answers of `nodes`, each once it answered; a node lost meanwhile, or a tenure ended (`over`), answers nothing. */
export async function takeCensus(
  w: WireParts, nodes: readonly string[], addressOf: (node: string) => string, lost: (node: string) => boolean, over: () => boolean,
): Promise<CensusAnswer[]> {
  const answers = await Promise.all(nodes.map(async (node): Promise<CensusAnswer> => {
    while (!over() && !lost(node)) {
      // Addressed anew each time: a node that restarted meanwhile is asked in its new process.
      const answer = await ask(w, execSubject(w.cluster, node), addressOf(node), EXEC_CONTEXT, { op: 'census' }, ASK_WAIT_MS);
      const held = readHeld(answer);
      if (held !== null) return { node, held };
      await new Promise((r) => setTimeout(r, AGAIN_MS));
    }
    return { node, held: [] };
  }));
  return answers;
}
