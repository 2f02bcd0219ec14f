// The leader's side of forwarding (forwarding.ts): it alone subscribes to the forwarding
// subject while it leads, runs each forwarded batch through its own engine and answers once
// the batch is durable, in chunks below the server's max_payload and an empty message last.
// A batch is run only when it is a node's, for this tenure (forward-seal.ts): a node's batch
// for another tenure is answered with a Redirect; anything else published to the subject gets
// the empty message alone, and a warning (at most one a second, the rest counted).
import { serialize, deserialize } from 'node:v8';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Command, Reply } from '../domain/command.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { ClusterKeys } from './cluster-keys.ts';
import { NonceBook, openRequest, sealAnswer } from './forward-seal.ts';
import { chunkBytes, type LocalBatch, type Redirect } from './forwarding.ts';

export interface CommandServerOptions {
  readonly nc: NatsConnection;
  readonly subject: string;
  /** The cluster's name and keys: what a node's batch is sealed with. */
  readonly cluster: string;
  readonly keys: ClusterKeys;
  /** This tenure's lease holder: batches addressed to another are redirected, not run (forward-seal.ts). */
  readonly holder: string;
  readonly run: LocalBatch;
  readonly log: Logger;
}

/** The leader's side: answers forwarded batches through its own engine until stop(). */
export class CommandServer {
  private readonly sub: Subscription;
  private readonly nonces = new NonceBook();
  private refusedAt = 0;
  private refusedUnsaid = 0;

  constructor(o: CommandServerOptions) {
    const chunk = chunkBytes(o.nc);
    const empty = new Uint8Array(0);
    this.sub = o.nc.subscribe(o.subject, {
      callback: (err, msg) => {
        if (err !== null) return;
        const opened = openRequest(o.keys, o.cluster, o.holder, msg.data, this.nonces);
        if ('refused' in opened) {
          this.refused(o.log, opened.refused);
          try { msg.respond(empty); } catch { /* no reply subject, or the connection closing */ }
          return;
        }
        const answer = (replies: Reply[] | Redirect | null): void => {
          try {
            const body = sealAnswer(o.keys, o.cluster, opened.nonce, serialize(replies));
            for (let at = 0; at < body.length; at += chunk) msg.respond(body.subarray(at, at + chunk));
            msg.respond(empty);
          } catch (e) {
            o.log.warn({ err: errorText(e) }, 'answering a forwarded batch failed');
          }
        };
        if ('misaddressed' in opened) {
          answer({ redirect: o.holder });
          return;
        }
        let cmds: Command[] | null = null;
        try {
          const v = deserialize(opened.payload) as unknown;
          if (Array.isArray(v)) cmds = v as Command[];
        } catch { /* answered null below */ }
        if (cmds === null) {
          o.log.warn('a forwarded batch that is not a list of commands; answered with nothing');
          answer(null);
          return;
        }
        o.run(cmds, answer);
      },
    });
  }

  private refused(log: Logger, why: string): void {
    const now = Date.now();
    if (now - this.refusedAt < 1000) {
      this.refusedUnsaid++;
      return;
    }
    log.warn({ why, more: this.refusedUnsaid }, 'a message on the forwarding subject that is no node\'s batch: not run');
    this.refusedAt = now;
    this.refusedUnsaid = 0;
  }

  /**
   * No more batches are taken; those already delivered to this process are still run and
   * answered (a plain unsubscribe would drop them, leaving their senders waiting in vain).
   */
  stop(): void {
    void this.sub.drain().catch(() => {});
  }
}
