// The cluster fuzzer's choices (test/integration/cluster-fuzz.test.ts): a seed, printed at the
// start and taken from TICKD_FUZZ_SEED when given, and the picks made from it (a seeded PRNG,
// test/helpers/prng.ts), so that a failure's choices replay (the timing of a cluster does not).
import { prng } from '../prng.ts';

/** TICKD_FUZZ_SEED when given (an integer 0..2^32-1), a random seed otherwise. */
export function fuzzSeed(): number {
  const given = process.env['TICKD_FUZZ_SEED'];
  if (given === undefined) return Math.floor(Math.random() * 2 ** 32);
  if (!/^[0-9]{1,10}$/.test(given) || Number(given) >= 2 ** 32) throw new Error(`TICKD_FUZZ_SEED must be an integer 0..4294967295, got ${given}`);
  return Number(given);
}

const TOKEN_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';

/** Choices from a seeded PRNG. */
export class Rng {
  private readonly next: () => number;
  constructor(seed: number) { this.next = prng(seed); }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]!; }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.next() * 256);
    return b;
  }
  token(max = 24): string {
    let s = '';
    for (let i = this.int(1, max); i > 0; i--) s += TOKEN_CHARS[this.int(0, TOKEN_CHARS.length - 1)];
    return s;
  }
  /** A copy cut short (never whole). */
  truncated(b: Uint8Array): Buffer {
    return Buffer.from(b.subarray(0, b.length === 0 ? 0 : this.int(0, b.length - 1)));
  }
  /** A copy with one byte changed. */
  flipped(b: Uint8Array): Buffer {
    const c = Buffer.from(b);
    if (c.length > 0) c[this.int(0, c.length - 1)]! ^= this.int(1, 255);
    return c;
  }
}

/**
 * The three streams of choices: the fuzzer's; the forger's (answering as it overhears) and the
 * client load's apart, so that their timing leaves the fuzzer's sequence alone.
 */
export function fuzzRngs(seed: number): { readonly fuzz: Rng; readonly forge: Rng; readonly load: Rng } {
  return { fuzz: new Rng(seed), forge: new Rng(seed ^ 0x9e3779b9), load: new Rng(seed ^ 0x85ebca6b) };
}
