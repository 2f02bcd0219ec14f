// The cluster's shared secrets (tickd(8) SECURITY, --cluster-secret-file): what makes a
// forwarded batch, a stream record or a checkpoint a tickd node's, and not the work of anyone
// who can publish to NATS. The file holds one secret a line (blank lines and `#` comments
// aside), each at least MIN_SECRET characters; the first signs, every one verifies, so a
// secret is rotated without downtime by adding the new one second on every node, then moving
// it first, then (once nothing it alone signed is left) removing the old.
//
// A secret becomes a 32-byte key through SHA-256 (any length, any characters), and a key is
// named in what it signs by a 4-byte id, so that a verifier picks the key at once. The MAC is
// HMAC-SHA256, computed from the key's inner and outer pads with one-shot hashes: a replay
// verifies every record after the checkpoint, and createHmac costs several times as much.
import { hash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

export const MIN_SECRET = 32;
export const KEY_ID_BYTES = 4;
export const MAC_BYTES = 32;
const BLOCK = 64;

interface Key {
  readonly id: Buffer;
  readonly inner: Buffer;
  readonly outer: Buffer;
}

function deriveKey(secret: string): Key {
  const key = hash('sha256', `tickd cluster secret\0${secret}`, 'buffer');
  const inner = Buffer.alloc(BLOCK, 0x36);
  const outer = Buffer.alloc(BLOCK, 0x5c);
  for (let i = 0; i < key.length; i++) {
    inner[i]! ^= key[i]!;
    outer[i]! ^= key[i]!;
  }
  return { id: hash('sha256', Buffer.concat([Buffer.from('tickd key id\0'), key]), 'buffer').subarray(0, KEY_ID_BYTES), inner, outer };
}

/** The secrets of a secret file's text; a string saying what is wrong with it otherwise. */
export function parseSecrets(text: string): string[] | string {
  const secrets = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  if (secrets.length === 0) return 'holds no secret (one a line, at least 32 characters: `openssl rand 32 | base64`)';
  const short = secrets.findIndex((s) => s.length < MIN_SECRET);
  if (short >= 0) return `secret ${short + 1} is ${secrets[short]!.length} characters long; at least ${MIN_SECRET} are needed (\`openssl rand 32 | base64\`)`;
  return secrets;
}

export class ClusterKeys {
  private readonly keys: readonly Key[];

  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('no cluster secret');
    this.keys = secrets.map(deriveKey);
  }

  /** Reads --cluster-secret-file; throws an Error naming the file and what is wrong. */
  static fromFile(path: string | null): { keys: ClusterKeys; warning: string | null } {
    if (path === null) throw new Error('no --cluster-secret-file: the file of the secret every node of the cluster shares (tickd(8) SECURITY)');
    let text: string;
    let mode: number;
    try {
      text = readFileSync(path, 'utf8');
      mode = statSync(path).mode;
    } catch (err) {
      throw new Error(`--cluster-secret-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const secrets = parseSecrets(text);
    if (typeof secrets === 'string') throw new Error(`--cluster-secret-file ${path} ${secrets}`);
    const warning = (mode & 0o077) !== 0 ? `--cluster-secret-file ${path} may be read by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 it` : null;
    return { keys: new ClusterKeys(secrets), warning };
  }

  /** The id of the key that signs (the first secret's). */
  get signingId(): Buffer {
    return this.keys[0]!.id;
  }

  /** HMAC-SHA256 of the parts, concatenated, under the signing key, or the key `id` names (null: no such key). */
  mac(parts: readonly Uint8Array[], id: Uint8Array = this.keys[0]!.id): Buffer | null {
    const key = this.keys.find((k) => k.id.equals(id));
    if (key === undefined) return null;
    const inner = hash('sha256', Buffer.concat([key.inner, ...parts]), 'buffer');
    return hash('sha256', Buffer.concat([key.outer, inner]), 'buffer');
  }

  /** Whether `mac` is the MAC of the parts under the key `id` names. */
  verify(parts: readonly Uint8Array[], id: Uint8Array, mac: Uint8Array): boolean {
    const expected = this.mac(parts, id);
    return expected !== null && mac.length === MAC_BYTES && timingSafeEqual(expected, mac);
  }
}
