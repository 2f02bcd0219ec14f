// The redis runner's companion (doc/execution.md "Keys to deduplicate on"): the value of
// `<COMMAND> <key> <job id>` stays the job identifier, what every consumer of a redis rule
// already reads, and the keys to deduplicate on go beside it, in the same transaction, with
// the same command on `<key>:tickd`:
//
//   {"job_id":"<id>","execution":<ns>,"attempt":<n>,"execution_key":"<32 hex>"}
//
// - PUBLISH: published on the channel `<key>:tickd` right after the job id's message; a
//   subscriber to both channels gets the two one after the other. Nobody subscribed: nothing
//   is kept.
// - SET: `<key>:tickd` holds the record of the execution that set `<key>`; read both at once
//   (MGET) to get a matching pair.
// - LPUSH, RPUSH: the list `<key>:tickd` gets the record at the same end, so a consumer popping
//   both lists from the same end (MULTI, or a script) gets the record of the job id it popped
//   (check job_id). A consumer that never reads it must not see it grow: it is trimmed to its
//   newest COMPANION_LIST_MAX entries, so past that backlog the oldest ids have no record.
import type { RedisCommand } from '../domain/runner-spec.ts';
import type { Execution } from './execution.ts';
import type { ExecutionKeys } from './execution-key.ts';

export const COMPANION_SUFFIX = ':tickd';
/** At about 120 bytes a record, a list never read holds about 1.2 MB. */
export const COMPANION_LIST_MAX = 10_000;

export function companionRecord(exec: Execution, keys: ExecutionKeys): string {
  return `{"job_id":${JSON.stringify(exec.jobId)},"execution":${exec.execution.toString()},"attempt":${keys.attemptNo},"execution_key":"${keys.key}"}`;
}

/** The commands that follow `<command> <key> <job id>` in its transaction. */
export function companionCommands(command: RedisCommand, key: string, record: string): string[][] {
  const companion = `${key}${COMPANION_SUFFIX}`;
  switch (command) {
    case 'PUBLISH':
    case 'SET':
      return [[command, companion, record]];
    case 'LPUSH':
      return [[command, companion, record], ['LTRIM', companion, '0', String(COMPANION_LIST_MAX - 1)]];
    case 'RPUSH':
      return [[command, companion, record], ['LTRIM', companion, String(-COMPANION_LIST_MAX), '-1']];
    default: {
      const never: never = command;
      return never;
    }
  }
}
