// IdArena: size classes that cover every length, identifiers (ASCII, multi-byte UTF-8, empty,
// 1 024 bytes, the maximum) read back and compared exactly, byte prefixes, the reuse of freed
// blocks by their class (and only by it), blocks that never span chunks, and the limits.
import { expect } from 'chai';
import { CLASS_SIZES, classOf, IdArena, MAX_ID_BYTES } from '../../../lib/store/id-arena.ts';
import { MAX_IDENTIFIER_BYTES } from '../../../lib/domain/identifier.ts';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

function store(arena: IdArena, id: string, slot: number): number {
  return arena.add(id, utf8(id), slot);
}

describe('store/id-arena IdArena', () => {
  it('size classes: every length up to 64 KiB gets the smallest class that holds it, 8-aligned', () => {
    for (const size of CLASS_SIZES) expect(size % 8).to.equal(0);
    const wrong: number[] = [];
    for (let n = 1; n <= 65_536; n++) {
      const c = classOf(n);
      const fits = CLASS_SIZES[c]! >= n && (c === 0 || CLASS_SIZES[c - 1]! < n);
      // at most a quarter of a block unused past 64 bytes
      if (!fits || (n > 64 && CLASS_SIZES[c]! > 1.25 * n)) wrong.push(n);
    }
    expect(wrong).to.deep.equal([]);
    expect(CLASS_SIZES.at(-1)).to.equal(65_536);
  });

  it('reads back and recognises identifiers exactly: ASCII, multi-byte UTF-8, empty, 1 024 bytes, the maximum', () => {
    const arena = new IdArena();
    const ids = ['job.1', 'é', 'caf\u00e9.日本.\u{1F600}', '', 'x'.repeat(MAX_IDENTIFIER_BYTES), 'ü'.repeat(512), 'm'.repeat(MAX_ID_BYTES)];
    const refs = ids.map((id, slot) => store(arena, id, slot * 1000 + 7));
    ids.forEach((id, i) => {
      const ref = refs[i]!;
      expect(arena.read(ref)).to.equal(id);
      expect(arena.lengthOf(ref)).to.equal(utf8(id));
      expect(arena.slotOf(ref)).to.equal(i * 1000 + 7);
      expect(arena.equals(ref, id)).to.equal(true);
      expect(arena.equals(ref, `${id}x`)).to.equal(false);
      if (id.length > 0) expect(arena.equals(ref, id.slice(0, -1))).to.equal(false);
    });
  });

  it('never confuses a string with the UTF-8 bytes of another', () => {
    const arena = new IdArena();
    const e = store(arena, 'é', 0); // bytes C3 A9
    expect(arena.equals(e, '\u00c3\u00a9')).to.equal(false); // the same two numbers as code units
    expect(arena.equals(e, 'e')).to.equal(false);
    const latin = store(arena, '\u00c3\u00a9', 1); // bytes C3 83 C2 A9
    expect(arena.equals(latin, 'é')).to.equal(false);
    expect(arena.equals(latin, '\u00c3\u00a9')).to.equal(true);
    const repl = store(arena, 'a\ufffd', 2);
    expect(arena.equals(repl, 'a\ud800')).to.equal(false); // a lone surrogate encodes as U+FFFD
    const ascii = store(arena, 'ab', 3);
    expect(arena.equals(ascii, 'aé')).to.equal(false);
  });

  it('startsWith compares UTF-8 bytes, empty prefix included', () => {
    const arena = new IdArena();
    const ref = store(arena, 'team.日本.x', 0);
    const bytes = (s: string): Uint8Array => Buffer.from(s, 'utf8');
    expect(arena.startsWith(ref, bytes(''))).to.equal(true);
    expect(arena.startsWith(ref, bytes('team.'))).to.equal(true);
    expect(arena.startsWith(ref, bytes('team.日'))).to.equal(true);
    expect(arena.startsWith(ref, bytes('team.日本.x'))).to.equal(true);
    expect(arena.startsWith(ref, bytes('team.日本.xy'))).to.equal(false);
    expect(arena.startsWith(ref, bytes('team.本'))).to.equal(false);
  });

  it('a freed block is reused by the next identifier of its class, newest first, and by no other class', () => {
    const arena = new IdArena();
    const a = store(arena, 'aaaa', 0); // 6 + 4 bytes: class 16
    const b = store(arena, 'bbbb', 1);
    const long = store(arena, 'l'.repeat(40), 2);
    const used = arena.usage().blockBytes;
    arena.free(a);
    arena.free(b);
    expect(arena.usage().freeBytes).to.equal(32);
    const c = store(arena, 'cccccc', 3); // 12 bytes: class 16 too
    expect(c).to.equal(b);
    expect(arena.read(c)).to.equal('cccccc');
    expect(arena.slotOf(c)).to.equal(3);
    const d = store(arena, 'd'.repeat(30), 4); // class 40: not from the class-16 list
    expect([a, b, long]).to.not.include(d);
    const e = store(arena, 'eeeee', 5);
    expect(e).to.equal(a);
    expect(arena.usage().freeBytes).to.equal(0);
    expect(arena.usage().blockBytes).to.equal(used + 40);
    expect(arena.read(long)).to.equal('l'.repeat(40));
  });

  it('churn within a class does not grow the arena', () => {
    const arena = new IdArena();
    const live: number[] = [];
    for (let i = 0; i < 1000; i++) live.push(store(arena, `job.${1000 + i}`, i));
    const after = arena.usage();
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 500; i++) arena.free(live[i]!);
      for (let i = 0; i < 500; i++) live[i] = store(arena, `new.${round}.${100 + i}`.slice(0, 8), i);
    }
    expect(arena.usage()).to.deep.equal(after);
  });

  it('fills chunk after chunk; no block spans two', () => {
    const arena = new IdArena();
    const ids: string[] = [];
    const refs: number[] = [];
    for (let i = 0; i < 2500; i++) { // ~2.5 MiB of 1 KiB identifiers plus small ones between
      const id = i % 3 === 0 ? `s${i}` : `${'k'.repeat(1018)}${String(i).padStart(6, '0')}`;
      ids.push(id);
      refs.push(store(arena, id, i));
    }
    expect(arena.usage().chunks).to.be.at.least(3);
    ids.forEach((id, i) => {
      expect(arena.read(refs[i]!)).to.equal(id);
      expect(arena.slotOf(refs[i]!)).to.equal(i);
    });
  });

  it('refuses an identifier over MAX_ID_BYTES, changing nothing', () => {
    const arena = new IdArena();
    store(arena, 'a', 0);
    const before = arena.usage();
    expect(() => arena.add('x'.repeat(MAX_ID_BYTES + 1), MAX_ID_BYTES + 1, 1)).to.throw(RangeError);
    expect(arena.usage()).to.deep.equal(before);
  });

  it('clear() drops everything', () => {
    const arena = new IdArena();
    for (let i = 0; i < 10; i++) store(arena, `c${i}`, i);
    arena.clear();
    expect(arena.usage()).to.deep.equal({ chunks: 0, chunkBytes: 0, blockBytes: 0, freeBytes: 0 });
    const ref = store(arena, 'again', 0);
    expect(arena.read(ref)).to.equal('again');
  });
});
