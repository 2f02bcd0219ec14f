// The rolling-upgrade scenario's load: one line-protocol client per node slot (n1, n2, n3),
// each in a paced closed loop (one command, its reply, a short pause) of SETs of unique ids
// (some due in 1-3 s under `up.`, which an http rule fires to the sink; most far in the
// future under `far.`) and a few REMOVEs of far ids it had acknowledged. Only a reply `OK` is
// an acknowledged write; an ERROR, a timeout or a dropped connection is not, and a REMOVE
// without OK makes its id uncertain (left out of the checks). A client whose connection
// drops reconnects to whatever node now fills its slot: a restarted node listens on a new port.
import { LineClient } from '../../test/helpers/client.ts';
import type { TickdNode } from './rolling-node.ts';

/** 2100-01-01T00:00:00Z in ns: far jobs never come due during the scenario. */
const FAR_NS = 4_102_444_800_000_000_000n;
const PACE_MS = 10;
const DUE_SHARE = 0.12;
const REMOVE_SHARE = 0.04;
/** A follower holds a batch up to 2 x TTL + 2 s, a forwarded batch is answered within 15 s: beyond is a stuck connection. */
const REPLY_TIMEOUT_MS = 20_000;

export interface Acked { readonly exec: bigint; readonly at: number; readonly slot: string; readonly due: boolean }

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class Load {
  /** Every SET answered OK: id -> its execution, when and through which slot. */
  readonly acked = new Map<string, Acked>();
  /** Every REMOVE answered OK: id -> when. */
  readonly removed = new Map<string, number>();
  /** REMOVEs sent but not acknowledged: the job may or may not be there. */
  readonly uncertain = new Set<string>();
  /** Replies other than OK (by text, ids and request ids cut out), and dropped connections: when (ms since the epoch). */
  readonly failures = new Map<string, number[]>();
  /** Per slot, when each acknowledgement arrived: how long a step held up the clients of the other nodes. */
  readonly ackTimes = new Map<string, number[]>();
  readonly reconnects = new Map<string, number>();
  /** Per slot, the longest stretch without an acknowledged write while the load ran (ms). */
  readonly longestGap = new Map<string, number>();
  sent = 0;
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private serial = 0;
  private readonly farIds: string[] = [];

  private readonly current: (slot: string) => TickdNode | undefined;

  constructor(current: (slot: string) => TickdNode | undefined) {
    this.current = current;
  }

  start(slots: readonly string[]): void {
    for (const slot of slots) this.loops.push(this.run(slot));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  private fail(what: string): void {
    const list = this.failures.get(what) ?? [];
    list.push(Date.now());
    this.failures.set(what, list);
  }

  private async run(slot: string): Promise<void> {
    let lastAck = Date.now();
    const times: number[] = [];
    this.ackTimes.set(slot, times);
    const acked = (): void => {
      const now = Date.now();
      this.longestGap.set(slot, Math.max(this.longestGap.get(slot) ?? 0, now - lastAck));
      lastAck = now;
      times.push(now);
    };
    let first = true;
    while (!this.stopping) {
      const node = this.current(slot);
      if (node === undefined || !node.alive || node.tcp.port === 0) { await sleep(50); continue; }
      let client: LineClient;
      try { client = await LineClient.connect(node.tcp); } catch { await sleep(100); continue; }
      if (!first) this.reconnects.set(slot, (this.reconnects.get(slot) ?? 0) + 1);
      first = false;
      try {
        while (!this.stopping) {
          await this.one(client, slot, acked);
          await sleep(PACE_MS);
        }
      } catch (err) {
        // Closed by the node (its stop) or stuck: what was in flight is not acknowledged.
        this.fail(/timed out/.test((err as Error).message) ? 'no reply in 20 s' : 'connection dropped');
      } finally {
        client.close();
      }
    }
    this.longestGap.set(slot, Math.max(this.longestGap.get(slot) ?? 0, Date.now() - lastAck));
  }

  private async one(client: LineClient, slot: string, acked: () => void): Promise<void> {
    const n = this.serial++;
    const rid = `r${n}`;
    const r = Math.random();
    if (r < REMOVE_SHARE && this.farIds.length > 0) {
      const id = this.farIds.splice(Math.floor(Math.random() * this.farIds.length), 1)[0]!;
      this.uncertain.add(id); // until its OK arrives
      this.sent++;
      const reply = (await client.request(rid, `REMOVE ${id}`, REPLY_TIMEOUT_MS)).at(-1)!;
      if (reply !== `${rid} OK`) { this.fail(reply.slice(rid.length + 1).replace(/"[^"]*"/g, '"…"')); return; }
      this.uncertain.delete(id);
      this.removed.set(id, Date.now());
      acked();
      return;
    }
    const due = r < REMOVE_SHARE + DUE_SHARE;
    const id = due ? `up.${slot}.${n}` : `far.${slot}.${n}`;
    const exec = due ? BigInt(Date.now() + 1000 + Math.floor(Math.random() * 2000)) * 1_000_000n : FAR_NS + BigInt(n);
    this.sent++;
    const reply = (await client.request(rid, `SET ${id} ${exec}`, REPLY_TIMEOUT_MS)).at(-1)!;
    if (reply !== `${rid} OK`) { this.fail(reply.slice(rid.length + 1).replace(/"[^"]*"/g, '"…"')); return; }
    this.acked.set(id, { exec, at: Date.now(), slot, due });
    if (!due) this.farIds.push(id);
    acked();
  }
}

/** The longest stretch in [from, to] without an acknowledgement on `slot`'s client (ms). */
export function gapIn(load: Load, slot: string, from: number, to: number): number {
  let prev = from;
  let worst = 0;
  for (const t of load.ackTimes.get(slot) ?? []) {
    if (t < from) continue;
    if (t > to) break;
    worst = Math.max(worst, t - prev);
    prev = t;
  }
  return Math.max(worst, to - prev);
}

/** QUERY <prefix> through `node`: id -> [status, execution]. */
export async function queryAll(node: TickdNode, prefix: string): Promise<Map<string, [string, bigint]>> {
  const client = await LineClient.connect(node.tcp);
  try {
    const lines = await client.request('q', `QUERY ${prefix}`, 60_000);
    const last = lines.pop()!;
    if (last !== 'q OK') throw new Error(`QUERY ${prefix} through ${node.name}: ${last}`);
    const out = new Map<string, [string, bigint]>();
    for (const l of lines) {
      const [, id, status, exec] = l.split(' ');
      out.set(id!, [status!, BigInt(exec!)]);
    }
    return out;
  } finally {
    client.close();
  }
}
