// `job import` and `job export` (tickd-ctl(1) "IMPORT AND EXPORT").
//
// Import pipelines: lines are read, parsed and set through the client library's setMany
// (lib/client/bulk.ts), each entry carrying its input line number, so an error answer names
// its line whatever else is in flight. The lines are spread over IMPORT_CONNECTIONS clients
// (the daemon answers each connection's 4096 outstanding commands per round, so one
// connection leaves it waiting), by a hash of the identifier: all lines of one job go through
// one connection, in order, so a job given twice ends with its last line's time. Memory stays
// bounded: each client's setMany reads its share only as fast as the daemon answers, and the
// input is read no faster than the slowest share takes it (SHARE_QUEUE entries apart).
// Every relative WHEN counts from the start of the import.
//
// Export writes `ID NANOSECONDS` lines (or JSON lines), the format import reads, so
// `tickd ctl --addr A job export P | tickd ctl --addr B job import` copies a namespace. Without
// --all it leaves out executed and failed jobs: imported, they would be planned again in the
// past and run at once.
import { open } from 'node:fs/promises';
import type { Client, JobEntry } from '../client/index.ts';
import { ReplyError, type TickdError } from '../client/errors.ts';
import { LineFramer, MAX_LINE_BYTES } from '../protocol/framer.ts';
import { toJson } from '../http/json.ts';
import { expectOk, type Prepare } from './context.ts';
import { ConnectionError, UsageError } from './errors.ts';
import { parseImportLine } from './import-line.ts';
import { checkPrefix } from './job-commands.ts';
import { parseJobLine } from '../client/replies.ts';
import { listing } from './requests.ts';

/** Connections an import spreads its lines over. */
export const IMPORT_CONNECTIONS = 4;
/** Entries read for one connection and not yet taken by its setMany, at most. */
const SHARE_QUEUE = 8192;

async function inputOf(file: string | undefined, stdin: NodeJS.ReadableStream): Promise<AsyncIterable<Buffer> & { destroy?: () => void }> {
  if (file === undefined || file === '-') return stdin as AsyncIterable<Buffer>;
  try {
    const handle = await open(file, 'r');
    return handle.createReadStream({ highWaterMark: 1024 * 1024 });
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Which connection a job's lines go to: the same one for every line of one identifier. */
export function shardOf(id: string, shards: number): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return (h >>> 0) % shards;
}

interface ImportEntry {
  readonly id: string;
  readonly when: bigint;
  readonly line: number;
}

/** One connection's share of the lines: a bounded queue its setMany reads as an async iterable. */
class Share implements AsyncIterable<ImportEntry> {
  private items: ImportEntry[] = [];
  private ended = false;
  private taker: (() => void) | null = null;
  private giver: (() => void) | null = null;

  get full(): boolean {
    return this.items.length >= SHARE_QUEUE;
  }

  push(e: ImportEntry): void {
    this.items.push(e);
    this.wakeTaker();
  }

  end(): void {
    this.ended = true;
    this.wakeTaker();
  }

  /** Resolves once the queue has room. */
  room(): Promise<void> {
    return this.full ? new Promise((resolve) => { this.giver = resolve; }) : Promise.resolve();
  }

  private wakeTaker(): void {
    const t = this.taker;
    this.taker = null;
    t?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ImportEntry> {
    for (;;) {
      if (this.items.length === 0) {
        if (this.ended) return;
        await new Promise<void>((resolve) => { this.taker = resolve; });
        continue;
      }
      const batch = this.items;
      this.items = [];
      const g = this.giver;
      this.giver = null;
      g?.();
      yield* batch;
    }
  }
}

interface Counts {
  lines: number;
  skipped: number;
  imported: number;
  failed: number;
  unanswered: number;
}

export const jobImport: Prepare = (args, input) => {
  const file = args[0];
  return async (ctx) => {
    const source = await inputOf(file, ctx.stdin);
    const first = await ctx.client();
    const opened = await Promise.allSettled(Array.from({ length: IMPORT_CONNECTIONS - 1 }, () => ctx.open()));
    const extra = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = opened.find((o) => o.status === 'rejected');
    if (refused !== undefined) {
      for (const c of extra) c.destroy();
      throw refused.reason;
    }
    const clients: Client[] = [first, ...extra];
    const shares = clients.map(() => new Share());
    const n: Counts = { lines: 0, skipped: 0, imported: 0, failed: 0, unanswered: 0 };
    let lost: TickdError | null = null;
    const onError = (err: TickdError, _index: number, entry: JobEntry) => {
      if (err instanceof ReplyError) {
        n.failed++;
        ctx.warn(`line ${(entry as ImportEntry).line}: ${err.code}${err.detail === '' ? '' : `: ${err.detail}`}`);
      } else {
        lost ??= err;
        if (err.maybeApplied) n.unanswered++;
      }
    };
    const loads = clients.map((c, i) => c.setMany(shares[i]!, { onError }));
    const framer = new LineFramer();
    /** Takes one framed line; the share it filled, if any. */
    const take = (line: string | { tooLong: true }): Share | null => {
      const lineNo = ++n.lines;
      if (typeof line !== 'string') {
        n.failed++;
        ctx.warn(`line ${lineNo}: longer than ${MAX_LINE_BYTES} bytes`);
        return null;
      }
      const parsed = parseImportLine(line, input.nowNs);
      if (parsed.kind === 'skip') {
        n.skipped++;
        return null;
      }
      if (parsed.kind === 'error') {
        n.failed++;
        ctx.warn(`line ${lineNo}: ${parsed.message}`);
        return null;
      }
      const share = shares[shardOf(parsed.id, shares.length)]!;
      share.push({ id: parsed.id, when: BigInt(parsed.ns), line: lineNo });
      return share.full ? share : null;
    };
    let complete = false;
    try {
      for await (const chunk of source) {
        framer.push(chunk);
        for (let l = framer.shift(); l !== undefined; l = framer.shift()) {
          const full = take(l);
          if (full !== null) await full.room();
        }
        if (lost !== null) break;
      }
      if (lost === null && framer.bufferedBytes > 0) {
        framer.push(Buffer.from('\n')); // a last line without its newline
        for (let l = framer.shift(); l !== undefined; l = framer.shift()) take(l);
      }
      complete = lost === null;
    } finally {
      for (const s of shares) s.end();
      const results = await Promise.allSettled(loads);
      for (const r of results) if (r.status === 'fulfilled') n.imported += r.value.ok;
      for (const c of extra) c.destroy();
      if (!complete) source.destroy?.();
    }
    if (lost !== null) {
      throw new ConnectionError(`${ctx.describe(lost).message} (${n.imported} jobs imported by then; ${n.unanswered} sent without an answer)`);
    }
    if (ctx.format === 'json') ctx.out.write(`${toJson({ lines: n.lines, imported: n.imported, failed: n.failed, skipped: n.skipped })}\n`);
    else ctx.warn(`imported ${n.imported} jobs from ${n.lines} lines${n.failed > 0 ? `; ${n.failed} lines failed` : ''}${n.skipped > 0 ? `; ${n.skipped} blank or comment lines` : ''}`);
    return n.failed > 0 ? 1 : 0;
  };
};

export const jobExport: Prepare = (args, input) => {
  const prefix = checkPrefix(args[0]);
  const all = input.options.all === true;
  return async (ctx) => {
    const client = await ctx.client();
    const answer = await listing(client, prefix === '' ? 'QUERY' : `QUERY ${prefix}`, parseJobLine, (job) => {
      if (!all && (job.status === 'executed' || job.status === 'failed')) return;
      ctx.out.write(ctx.format === 'json'
        ? `${toJson({ id: job.id, execution: job.execution, status: job.status })}\n`
        : `${job.id} ${job.execution}\n`);
    });
    expectOk(answer);
    return 0;
  };
};
