// The client load of the cluster fuzz test (test/integration/cluster-fuzz.test.ts): one client
// connection per node, pipelined, and what every identifier it wrote may hold at the end.
import { nowNs, type LineClient } from '../client.ts';
import type { Rng } from './choices.ts';
import { FAR } from './target.ts';

/**
 * What an identifier may hold: `acked`, the time its last acknowledged SET set (null: none was);
 * `maybe`, the times of SETs after it that were not acknowledged (they may have run); `removed`,
 * whether a REMOVE was acknowledged, or sent and not answered OK; `ever`, every time any SET of
 * it carried (what a record of it pushed out of the stream while no node ran may fall back to).
 */
export interface Expect { acked: bigint | null; maybe: bigint[]; removed: 'no' | 'yes' | 'maybe'; ever: bigint[] }

/**
 * One client connection's load, pipelined `depth` deep until stopped: SETs far in the future
 * (some SET again to a new time once acknowledged), SETs due now (the rule f. runs them),
 * REMOVEs of acknowledged jobs, and GETs of jobs that never exist (a forged answer would make
 * one exist). What every identifier may hold at the end is kept in `expect`.
 */
export class Load {
  readonly expect = new Map<string, Expect>();
  readonly sent = new Set<string>();
  /** Every command answered OK: `SET <id> <time>`, `REMOVE <id>`. */
  readonly ackedCommands = new Set<string>();
  readonly replies = new Map<string, number>();
  /** GETs of jobs that never existed that were answered OK: forged answers taken. */
  readonly forged: string[] = [];
  /** Answers that contradict earlier ones (a REMOVE of an acknowledged job: not_found), or come out of order. */
  readonly anomalies: string[] = [];
  private readonly resettable: string[] = [];
  private readonly removable: string[] = [];
  private stopped = false;
  private readonly pending: Array<{ rid: string; done: (line: string) => void; fail: (err: Error) => void }> = [];
  readonly done: Promise<void>;

  private readonly c: LineClient;
  private readonly node: string;
  private readonly rng: Rng;

  constructor(c: LineClient, node: string, rng: Rng, depth = 3) {
    this.c = c;
    this.node = node;
    this.rng = rng;
    void this.read();
    this.done = Promise.all(Array.from({ length: depth }, (_, lane) => this.lane(lane, depth))).then(() => {});
  }

  private async read(): Promise<void> {
    for (;;) {
      let line: string | null;
      try {
        line = await this.c.readLine(120_000);
      } catch (err) {
        line = null;
        for (const p of this.pending.splice(0)) p.fail(err as Error);
      }
      if (line === null) {
        for (const p of this.pending.splice(0)) p.fail(new Error('connection closed'));
        return;
      }
      const p = this.pending.shift();
      if (p === undefined || !line.startsWith(`${p.rid} `)) {
        this.anomalies.push(`a reply out of order: ${line} (waiting for ${p?.rid})`);
        p?.fail(new Error('a reply out of order'));
        continue;
      }
      p.done(line.slice(p.rid.length + 1));
    }
  }

  private send(rid: string, text: string): Promise<string> {
    return new Promise((done, fail) => {
      this.pending.push({ rid, done, fail });
      this.c.write(`${rid} ${text}\n`);
    });
  }

  private entry(id: string): Expect {
    let e = this.expect.get(id);
    if (e === undefined) this.expect.set(id, (e = { acked: null, maybe: [], removed: 'no', ever: [] }));
    return e;
  }

  private count(reply: string): void {
    const kind = reply.startsWith('ERROR') ? reply.split(' ').slice(0, 2).join(' ') : reply.split(' ')[0]!;
    this.replies.set(kind, (this.replies.get(kind) ?? 0) + 1);
  }

  private async lane(lane: number, depth: number): Promise<void> {
    for (let k = lane; !this.stopped; k += depth) {
      const rid = `${this.node}-${k}`;
      let reply: string;
      try {
        if (k % 11 === 3) {
          const id = `nx.${this.node}.${k}`;
          reply = await this.send(rid, `GET ${id}`);
          if (!reply.startsWith('ERROR')) this.forged.push(`GET ${id}: ${reply}`);
        } else if (k % 7 === 5 && this.resettable.length > 0) {
          const id = this.resettable.splice(this.rng.int(0, this.resettable.length - 1), 1)[0]!;
          const e = this.entry(id);
          const time = e.acked! + 1_000_000_000n;
          e.ever.push(time);
          reply = await this.send(rid, `SET ${id} ${time}`);
          if (reply === 'OK') {
            this.ackedCommands.add(`SET ${id} ${time}`);
            e.acked = time;
            e.maybe = [];
          } else {
            e.maybe.push(time);
          }
        } else if (k % 13 === 8 && this.removable.length > 0) {
          const id = this.removable.splice(this.rng.int(0, this.removable.length - 1), 1)[0]!;
          const e = this.entry(id);
          reply = await this.send(rid, `REMOVE ${id}`);
          if (reply === 'OK') this.ackedCommands.add(`REMOVE ${id}`);
          if (reply === 'OK') e.removed = 'yes';
          else if (reply.startsWith('ERROR not_found')) this.anomalies.push(`REMOVE of acknowledged ${id}: ${reply}`);
          else e.removed = 'maybe';
        } else {
          const due = k % 10 === 9;
          const id = `${due ? 'f' : 'w'}.${this.node}.${k}`;
          const time = due ? nowNs() : FAR + BigInt(k) * 1_000_000n;
          this.sent.add(id);
          const e = this.entry(id);
          e.ever.push(time);
          reply = await this.send(rid, `SET ${id} ${time}`);
          if (reply === 'OK') {
            this.ackedCommands.add(`SET ${id} ${time}`);
            e.acked = time;
            if (!due) (this.rng.chance(0.5) ? this.resettable : this.removable).push(id);
          } else {
            e.maybe.push(time);
          }
        }
      } catch {
        return; // the connection closed or went silent for minutes: the checks below tell
      }
      this.count(reply);
    }
  }

  get acked(): string[] {
    return [...this.expect].filter(([, e]) => e.acked !== null).map(([id]) => id);
  }

  /** Stops sending; resolves once every request sent is answered. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }
}
