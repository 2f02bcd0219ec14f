// `stat` and `ping` (tickd-ctl(1) COMMANDS). The protocol has no ping instruction: ping sends
// STAT, the one command every authenticated client may send whatever its namespace, and
// succeeds once the whole answer is in; it prints the round trip.
import { expectOk, type Prepare } from './context.ts';
import type { Client } from '../client/index.ts';
import { STAT_HEADER, TableWriter, statJson } from './output.ts';
import { parseStatLine } from '../client/replies.ts';
import { addrOf, listing } from './requests.ts';
import { toJson } from '../http/json.ts';

/** STAT as ordered pairs, and its lines as the daemon sent them. */
export async function fetchStat(client: Client): Promise<{ pairs: Array<[string, string]>; lines: string[] }> {
  const pairs: Array<[string, string]> = [];
  const lines: string[] = [];
  expectOk(await listing(client, 'STAT', parseStatLine, (pair, rest) => { pairs.push([pair[0], pair[1]]); lines.push(rest); }));
  return { pairs, lines };
}

export const stat: Prepare = () => async (ctx) => {
  const { pairs, lines } = await fetchStat(await ctx.client());
  if (ctx.format === 'json') ctx.out.write(`${statJson(pairs)}\n`);
  else if (ctx.format === 'raw') ctx.out.write(`${lines.join('\n')}\nOK\n`);
  else {
    const t = new TableWriter(STAT_HEADER);
    ctx.out.write(pairs.map((p) => t.add(p)).join('') + t.end());
  }
  return 0;
};

export const ping: Prepare = () => async (ctx) => {
  const client = await ctx.client();
  const t0 = process.hrtime.bigint();
  await fetchStat(client);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const addr = addrOf(client);
  if (ctx.format === 'json') ctx.out.write(`${toJson({ addr, ms: Math.round(ms * 1000) / 1000 })}\n`);
  else if (ctx.format === 'raw') ctx.out.write('OK\n');
  else ctx.out.write(`${addr} answered in ${ms.toFixed(2)} ms\n`);
  return 0;
};
