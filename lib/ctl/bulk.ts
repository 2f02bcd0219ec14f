// `job import` and `job export` (tickd-ctl(1) "IMPORT AND EXPORT").
//
// Import pipelines: lines are read, parsed and written as `<line number> SET <id> <ns>` in
// batches without waiting for answers; the request id is the input line number, so an error
// answer names its line whatever else is in flight. The lines are spread over
// IMPORT_CONNECTIONS connections (the daemon answers each connection's 4096 outstanding
// commands per round, so one connection leaves it waiting), by a hash of the identifier: all
// lines of one job go through one connection, in order, so a job given twice ends with its
// last line's time. Memory stays bounded: at most MAX_INFLIGHT requests per connection are
// unanswered and the sockets' backpressure is honoured before the next chunk of input is read.
// Every relative WHEN counts from the start of the import.
//
// Export writes `ID NANOSECONDS` lines (or JSON lines), the format import reads, so
// `tickd ctl --addr A job export P | tickd ctl --addr B job import` copies a namespace. Without
// --all it leaves out executed and failed jobs: imported, they would be planned again in the
// past and run at once.
import { open } from 'node:fs/promises';
import { LineFramer, MAX_LINE_BYTES } from '../protocol/framer.ts';
import { toJson } from '../http/json.ts';
import type { Client, ReplyHandler } from './connection.ts';
import { expectOk, type Prepare } from './context.ts';
import { ConnectionError, UsageError } from './errors.ts';
import { parseImportLine } from './import-line.ts';
import { checkPrefix } from './job-commands.ts';
import { parseAnswer, parseJobLine } from './replies.ts';
import { listing } from './requests.ts';

/** Connections an import spreads its lines over. */
export const IMPORT_CONNECTIONS = 4;
/** Requests written on one connection and not yet answered, at most. */
export const MAX_INFLIGHT = 16_384;
/** Bytes of requests gathered before one write. */
const BATCH_BYTES = 64 * 1024;

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

/** One connection of an import and the requests gathered for it. */
class Shard {
  readonly client: Client;
  batch = '';

  constructor(client: Client) {
    this.client = client;
  }

  /** Writes the batch; waits for the socket, and for answers when too many are in flight. */
  async flush(): Promise<void> {
    const c = this.client;
    if (c.failed !== null) throw c.failed;
    const text = this.batch;
    this.batch = '';
    if (text !== '' && !c.write(text)) await c.drained();
    if (c.inflight > MAX_INFLIGHT) await c.settledTo(MAX_INFLIGHT / 2);
  }
}

interface Counts {
  lines: number;
  skipped: number;
  imported: number;
  failed: number;
  sent: number;
  answered: number;
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
      for (const c of extra) c.close();
      throw refused.reason;
    }
    const shards = [first, ...extra].map((c) => new Shard(c));
    const n: Counts = { lines: 0, skipped: 0, imported: 0, failed: 0, sent: 0, answered: 0 };
    const replies: ReplyHandler = {
      line: (rest, rid) => {
        n.answered++;
        if (rest === 'OK') {
          n.imported++;
        } else {
          n.failed++;
          const a = parseAnswer(rest);
          ctx.warn(`line ${rid}: ${a === null || a.ok ? rest : `${a.code}${a.message === '' ? '' : `: ${a.message}`}`}`);
        }
        return true;
      },
      fail: () => {},
    };
    const framer = new LineFramer();
    /** Takes one framed line; the shard it filled past BATCH_BYTES, if any. */
    const take = (line: string | { tooLong: true }): Shard | null => {
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
      const shard = shards[shardOf(parsed.id, shards.length)]!;
      const rid = String(lineNo);
      shard.client.expect(rid, replies);
      n.sent++;
      shard.batch += `${rid} SET ${parsed.id} ${parsed.ns}\n`;
      return shard.batch.length >= BATCH_BYTES ? shard : null;
    };
    let complete = false;
    try {
      for await (const chunk of source) {
        framer.push(chunk);
        for (let l = framer.shift(); l !== undefined; l = framer.shift()) {
          const full = take(l);
          if (full !== null) await full.flush();
        }
        for (const s of shards) await s.flush();
      }
      if (framer.bufferedBytes > 0) {
        framer.push(Buffer.from('\n')); // a last line without its newline
        for (let l = framer.shift(); l !== undefined; l = framer.shift()) take(l);
      }
      for (const s of shards) await s.flush();
      await Promise.all(shards.map((s) => s.client.settledTo(0)));
      complete = true;
    } catch (err) {
      const lost = shards.find((s) => s.client.failed !== null)?.client.failed ?? (err instanceof ConnectionError ? err : null);
      if (lost === null) throw err;
      throw new ConnectionError(`${lost.message} (${n.imported} jobs imported by then; ${n.sent - n.answered} sent without an answer)`);
    } finally {
      for (const c of extra) c.close();
      if (!complete) source.destroy?.();
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
