// Pure helpers of the console's cluster view (no DOM): the nodes of a GET /cluster answer as
// table rows, the leader's count of executions waiting for a node, and what a job waits for
// (GET /jobs/{id} `waiting_for_node`). Invariant: integers arrive as decimal strings
// (parseExact), so counts are compared and shown as text, never through a JS number.
import { formatMs, isIntegerText } from './format.js';

/** "db, eu"; "none" for a node without tags. */
function tagList(tags) {
  return tags.length === 0 ? 'none' : tags.join(', ');
}

/**
 * The rows of the nodes table: name, role, whether it is the node that answered, its tags,
 * "running of capacity", its lag in records and when it last reported. `tags` and `running`
 * are null for a node of a tickd that runs only its own jobs (no `executor`). Empty for
 * anything but a GET /cluster answer.
 */
export function clusterNodeRows(view) {
  if (view === null || typeof view !== 'object' || !Array.isArray(view.nodes)) return [];
  return view.nodes.filter((n) => typeof n?.name === 'string').map((n) => {
    const ex = n.executor !== null && typeof n.executor === 'object' && Array.isArray(n.executor.tags) ? n.executor : null;
    return {
      name: n.name,
      role: typeof n.role === 'string' ? n.role : '?',
      self: n.name === view.node,
      tags: ex === null ? null : tagList(ex.tags),
      running: ex === null ? null : `${ex.running} of ${ex.capacity}`,
      lag: isIntegerText(n.lag) ? n.lag : '?',
      seen: isIntegerText(n.seen_ago_ms) ? `${formatMs(n.seen_ago_ms)} ago` : '?',
    };
  });
}

/**
 * The leader's line on executions waiting for a node having their rule's tags; null on a
 * follower (its answer has no `placement`).
 */
export function placementText(view) {
  const waiting = view?.placement?.waiting;
  if (!isIntegerText(waiting)) return null;
  if (waiting === '0') return 'No execution waits for a node.';
  if (waiting === '1') return '1 execution waits for a node having the tags its rule requires.';
  return `${waiting} executions wait for a node having the tags their rule requires.`;
}

/**
 * What a job waits for, from its `waiting_for_node`: "a node with the tag gpu", "a node with
 * the tags db, eu"; null when it waits for none.
 */
export function nodeWaitText(wait) {
  const on = wait?.on;
  if (!Array.isArray(on) || on.length === 0) return null;
  return on.length === 1 ? `a node with the tag ${on[0]}` : `a node with the tags ${on.join(', ')}`;
}
