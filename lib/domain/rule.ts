// A rule maps an identifier prefix (pattern) to a runner. Longest pattern wins; equal
// patterns: smallest rule identifier wins (decisions §3).
import type { RunnerSpec } from './runner-spec.ts';

export interface Rule {
  readonly id: string;
  readonly pattern: string;
  readonly runner: RunnerSpec;
}
