// The leader's side of forwarding (forwarding.ts): it alone subscribes to the forwarding
// subject while it leads, runs each forwarded batch through its own engine and answers once
// the batch is durable, in chunks below the server's max_payload and an empty message last.
import { serialize, deserialize } from 'node:v8';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Command, Reply } from '../domain/command.ts';
import type { Logger } from '../log.ts';
import { chunkBytes, type LocalBatch } from './forwarding.ts';

/** The leader's side: answers forwarded batches through its own engine until stop(). */
export class CommandServer {
  private readonly sub: Subscription;

  constructor(nc: NatsConnection, subject: string, run: LocalBatch, log: Logger) {
    const chunk = chunkBytes(nc);
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err !== null) return;
        let cmds: Command[] | null = null;
        try {
          const v = deserialize(msg.data) as unknown;
          if (Array.isArray(v)) cmds = v as Command[];
        } catch { /* answered null below */ }
        const answer = (replies: Reply[] | null): void => {
          try {
            const body = serialize(replies);
            for (let at = 0; at < body.length; at += chunk) msg.respond(body.subarray(at, at + chunk));
            msg.respond(new Uint8Array(0));
          } catch (e) {
            log.warn({ err: (e as Error)?.message }, 'answering a forwarded batch failed');
          }
        };
        if (cmds === null) {
          log.warn('a forwarded batch that is not a list of commands; answered with nothing');
          answer(null);
          return;
        }
        run(cmds, answer);
      },
    });
  }

  /**
   * No more batches are taken; those already delivered to this process are still run and
   * answered (a plain unsubscribe would drop them, leaving their senders waiting in vain).
   */
  stop(): void {
    void this.sub.drain().catch(() => {});
  }
}
