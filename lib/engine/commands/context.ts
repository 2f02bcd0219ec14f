// What a command handler may touch: the change tracker (stores + journal) and the STAT source.
import type { Command, Reply } from '../../domain/command.ts';
import type { StatValues } from '../../domain/stat.ts';
import type { Changes } from '../changes.ts';

export interface EngineContext {
  readonly changes: Changes;
  readonly stat: () => StatValues;
}

export type Handler<Op extends Command['op']> = (ctx: EngineContext, cmd: Extract<Command, { op: Op }>) => Reply;

export const DONE: Reply = { ok: true, kind: 'done' };
