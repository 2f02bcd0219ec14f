// Replaying a record into the stores: every record states a whole value, so applying one
// twice, or a prefix of the log again, is harmless.
import type { LogRecord } from '../engine/journal.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';

export function applyRecord(jobs: JobStore, rules: RuleStore, rec: LogRecord): void {
  switch (rec.t) {
    case 'job': jobs.put(rec.job); return;
    case 'rule': rules.put(rec.rule); return;
    case 'job.removed': jobs.delete(rec.id); return;
    case 'rule.removed': rules.delete(rec.id); return;
    default: {
      // JSON.stringify would throw on a job's bigint execution: name the tag instead
      const never: never = rec;
      throw new Error(`unknown record type ${String((never as { t: unknown }).t)}`);
    }
  }
}
