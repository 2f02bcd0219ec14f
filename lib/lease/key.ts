// One Lease's view of the lease key: single requests, none retried, none changing the
// lease's state. Who we are is written into every value (value.ts), with a random token
// minted here, so "is this write ours?" never depends on the caller's holder string.
// Invariant: a delete always names a revision (kv.delete() treats a previousSeq of 0 as "no
// condition" and would delete whatever is there, possibly another node's live lease).
import { randomUUID } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import type { Logger } from '../log.ts';
import { errorKind, describeError, isWrongLastSequence } from './errors.ts';
import { decodeLeaseValue, encodeLeaseValue } from './value.ts';

export class LeaseKey {
  readonly #kv: KV;
  readonly #key: string;
  readonly #node: string;
  readonly #holder: string;
  readonly #token = randomUUID();
  readonly #log: Logger;

  constructor(kv: KV, key: string, node: string, holder: string, log: Logger) {
    this.#kv = kv;
    this.#key = key;
    this.#node = node;
    this.#holder = holder;
    this.#log = log;
  }

  /** A fresh value for a new tenure; refreshes write it again unchanged. */
  newValue(): string {
    return encodeLeaseValue({
      node: this.#node, holder: this.#holder, acquiredAt: new Date().toISOString(), token: this.#token,
    });
  }

  /**
   * create(): the new revision, or null when not taken. "The key exists" is the normal
   * answer while someone else leads; other errors are logged once per kind in `logged`.
   */
  async create(value: string, logged: Set<string>): Promise<number | null> {
    try {
      return await this.#kv.create(this.#key, value);
    } catch (err) {
      if (!isWrongLastSequence(err)) logOnce(this.#log, logged, err, 'lease create failed; retrying');
      return null;
    }
  }

  /** Compare-and-set refresh; rejects as kv.update() does (callers tell the kinds apart). */
  update(value: string, revision: number, timeoutMs: number): Promise<number> {
    return this.#kv.update(this.#key, value, revision, timeoutMs);
  }

  /** The key's live value (not a delete marker), or null; errors logged once per kind. */
  async read(logged: Set<string>): Promise<KvEntry | null> {
    try {
      const entry = await this.#kv.get(this.#key);
      return entry !== null && entry.operation === 'PUT' ? entry : null;
    } catch (err) {
      logOnce(this.#log, logged, err, 'lease key lookup failed');
      return null;
    }
  }

  /** Written by this Lease object (any of its tenures)? */
  isOurs(entry: KvEntry): boolean {
    return decodeLeaseValue(entry)?.token === this.#token;
  }

  /** Delete by revision; rejects as kv.delete() does. */
  async delete(revision: number): Promise<void> {
    if (revision <= 0) throw new Error(`refusing an unconditional delete (revision ${revision})`);
    await this.#kv.delete(this.#key, { previousSeq: revision });
  }

  /** Delete by revision that only reports: true when it went through. */
  async tryDelete(revision: number): Promise<boolean> {
    try {
      await this.delete(revision);
      return true;
    } catch (err) {
      this.#log.debug({ revision, err: describeError(err) }, 'lease delete by revision refused');
      return false;
    }
  }
}

function logOnce(log: Logger, logged: Set<string>, err: unknown, msg: string): void {
  const kind = errorKind(err);
  if (logged.has(kind)) return;
  logged.add(kind);
  log.warn({ err: describeError(err) }, msg);
}
