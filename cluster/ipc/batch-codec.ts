// The wire form of a worker's command batch (the 'batch' message, messages.ts). Under a write
// load nearly every command is a SET, and structured clone spends most of a batch's cost on
// them: every object's property names written out and read back, each read name looked up in
// V8's string table, each object rebuilt through map transitions. Here a SET is 15 bytes plus
// its identifier in one buffer (a Buffer crosses the channel as one copy of bytes), and every
// other command travels beside it as an object, in order.
//
// Layout of `bin`, one entry per command, in batch order:
//   seq u32 LE | tag u8 | tag SET: execution i64 LE | id length u16 LE | id bytes
// A tag OBJECT entry takes the next command of `rest`.
//
// Invariants:
// - decodeBatch(encodeBatch(seqs, cmds)) gives back the same seqs and equal commands, in order.
// - Only a SET whose identifier is ASCII (one byte per character: every valid identifier) and
//   whose execution fits i64 (every storable one) is packed; anything else, even a command
//   the engine will refuse, crosses as an object, unchanged.
import type { Command } from '../../lib/domain/command.ts';
import { I64_MAX, I64_MIN } from '../../lib/domain/time.ts';

const TAG_OBJECT = 0;
const TAG_SET = 1;
const ENTRY_BYTES = 5;
const SET_BYTES = 10;
const MAX_PACKED_ID = 0xffff;

export interface WireBatch {
  readonly bin: Uint8Array;
  readonly rest: Command[];
}

type SetCommand = Extract<Command, { op: 'job.set' }>;

function packable(cmd: Command): cmd is SetCommand {
  return cmd.op === 'job.set' && cmd.id.length <= MAX_PACKED_ID && cmd.execution >= I64_MIN && cmd.execution <= I64_MAX;
}

/** Writes the ASCII `id` at `at`; false (bytes written so far are garbage) at its first non-ASCII character. */
function writeAscii(buf: Buffer, id: string, at: number): boolean {
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c > 0x7f) return false;
    buf[at + i] = c;
  }
  return true;
}

export function encodeBatch(seqs: readonly number[], cmds: readonly Command[]): WireBatch {
  let size = 0;
  for (const cmd of cmds) size += ENTRY_BYTES + (packable(cmd) ? SET_BYTES + cmd.id.length : 0);
  const bin = Buffer.allocUnsafe(size);
  const rest: Command[] = [];
  let at = 0;
  for (let i = 0; i < cmds.length; i++) {
    const cmd = cmds[i]!;
    bin.writeUInt32LE(seqs[i]!, at);
    if (packable(cmd) && writeAscii(bin, cmd.id, at + ENTRY_BYTES + SET_BYTES)) {
      bin[at + 4] = TAG_SET;
      bin.writeBigInt64LE(cmd.execution, at + ENTRY_BYTES);
      bin.writeUInt16LE(cmd.id.length, at + ENTRY_BYTES + 8);
      at += ENTRY_BYTES + SET_BYTES + cmd.id.length;
    } else {
      bin[at + 4] = TAG_OBJECT;
      rest.push(cmd);
      at += ENTRY_BYTES;
    }
  }
  // Entries that fell back to objects used less room than was counted for them.
  return { bin: at === size ? bin : bin.subarray(0, at), rest };
}

export class BatchDecodeError extends Error {}

export function decodeBatch(wire: WireBatch): { seqs: number[]; cmds: Command[] } {
  const bin = Buffer.from(wire.bin.buffer, wire.bin.byteOffset, wire.bin.byteLength);
  const seqs: number[] = [];
  const cmds: Command[] = [];
  let next = 0;
  let at = 0;
  while (at < bin.length) {
    if (at + ENTRY_BYTES > bin.length) throw new BatchDecodeError('batch cut inside an entry');
    seqs.push(bin.readUInt32LE(at));
    const tag = bin[at + 4];
    at += ENTRY_BYTES;
    if (tag === TAG_SET) {
      if (at + SET_BYTES > bin.length) throw new BatchDecodeError('batch cut inside a SET');
      const execution = bin.readBigInt64LE(at);
      const end = at + SET_BYTES + bin.readUInt16LE(at + 8);
      if (end > bin.length) throw new BatchDecodeError('batch cut inside an identifier');
      cmds.push({ op: 'job.set', id: bin.toString('latin1', at + SET_BYTES, end), execution });
      at = end;
    } else if (tag === TAG_OBJECT && next < wire.rest.length) {
      cmds.push(wire.rest[next++]!);
    } else {
      throw new BatchDecodeError(tag === TAG_OBJECT ? 'batch names more objects than it carries' : `unknown batch entry tag ${tag}`);
    }
  }
  if (next !== wire.rest.length) throw new BatchDecodeError('batch carries objects it does not name');
  return { seqs, cmds };
}
