// Line framing: chunk boundaries, CRLF, over-long lines, bounded memory, pipelined bulk input.
import { expect } from 'chai';
import { LineFramer, MAX_LINE_BYTES, type FramedLine } from '../../../lib/protocol/framer.ts';

function feed(framer: LineFramer, ...chunks: Array<string | Buffer>): FramedLine[] {
  const out: FramedLine[] = [];
  for (const c of chunks) {
    framer.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : c);
    out.push(...framer.lines());
  }
  return out;
}

const frame = (...chunks: Array<string | Buffer>) => feed(new LineFramer(), ...chunks);

describe('protocol/framer', () => {
  it('splits complete lines and keeps order', () => {
    expect(frame('a 1\nb 2\nc 3\n')).to.deep.equal(['a 1', 'b 2', 'c 3']);
  });

  it('waits for the rest of an incomplete line', () => {
    const f = new LineFramer();
    expect(feed(f, 'part SET par')).to.deep.equal([]);
    expect(f.bufferedBytes).to.equal(12);
    expect(feed(f, 'tial.line 7')).to.deep.equal([]);
    expect(feed(f, '\nnext')).to.deep.equal(['part SET partial.line 7']);
    expect(f.bufferedBytes).to.equal(4);
    expect(feed(f, '\n')).to.deep.equal(['next']);
    expect(f.bufferedBytes).to.equal(0);
  });

  it('removes one CR before LF, including when CR and LF arrive in separate chunks', () => {
    expect(frame('a\r\nb\n')).to.deep.equal(['a', 'b']);
    expect(frame('a\r', '\nb\r', '\n')).to.deep.equal(['a', 'b']);
    expect(frame('a', '\r', '\n')).to.deep.equal(['a']);
    expect(frame('a\r\r\n')).to.deep.equal(['a\r']);
    expect(frame('a\rb\n')).to.deep.equal(['a\rb']);
  });

  it('yields empty lines as empty strings', () => {
    expect(frame('\n\r\n', '\n')).to.deep.equal(['', '', '']);
  });

  it('works byte by byte', () => {
    const text = 'r1 SET a 1\r\nr2 GET "x y"\n';
    const bytes = [...Buffer.from(text)].map((b) => Buffer.from([b]));
    expect(frame(...bytes)).to.deep.equal(['r1 SET a 1', 'r2 GET "x y"']);
  });

  it('decodes UTF-8 split across chunks, and never throws on invalid UTF-8', () => {
    const euro = Buffer.from('€\n');
    expect(frame(euro.subarray(0, 1), euro.subarray(1, 2), euro.subarray(2))).to.deep.equal(['€']);
    const out = frame(Buffer.from([0x61, 0xff, 0xc3, 0x0a]));
    expect(out).to.deep.equal(['a\ufffd\ufffd']);
  });

  describe('line length limit', () => {
    const maxLine = 'x'.repeat(MAX_LINE_BYTES);

    it('accepts exactly 4096 bytes, with LF or CRLF, in one or several chunks', () => {
      expect(frame(`${maxLine}\n`)).to.deep.equal([maxLine]);
      expect(frame(`${maxLine}\r\n`)).to.deep.equal([maxLine]);
      expect(frame(maxLine.slice(0, 100), maxLine.slice(100), '\r', '\n')).to.deep.equal([maxLine]);
    });

    it('rejects 4097 bytes of content, in one or several chunks', () => {
      const one = frame(`${maxLine}y\n`);
      expect(one).to.have.length(1);
      expect(one[0]).to.deep.include({ tooLong: true });
      const split = frame(maxLine, 'y', '\n', 'ok\n');
      expect(split.map((l) => (typeof l === 'string' ? l : 'TOO LONG'))).to.deep.equal(['TOO LONG', 'ok']);
      const crNotBeforeLf = frame(maxLine, '\r', 'z\n', 'ok\n');
      expect(crNotBeforeLf.map((l) => (typeof l === 'string' ? l : 'TOO LONG'))).to.deep.equal(['TOO LONG', 'ok']);
    });

    it('a 5000-byte line followed by a valid line in the same chunk', () => {
      const long = `big SET ${'x'.repeat(5000)} 1`;
      const out = frame(`${long}\nnext GET none.x\n`);
      expect(out).to.have.length(2);
      const tl = out[0] as { tooLong: true; head: string };
      expect(tl.tooLong).to.equal(true);
      expect(tl.head.startsWith('big SET xxx')).to.equal(true);
      expect(Buffer.byteLength(tl.head)).to.equal(MAX_LINE_BYTES);
      expect(out[1]).to.equal('next GET none.x');
    });

    it('a 5000-byte line followed by a valid line in separate chunks, cut anywhere', () => {
      const text = `big SET ${'x'.repeat(5000)} 1\r\nnext GET none.x\r\n`;
      for (const cut of [1, 4, 100, 4095, 4096, 4097, 4098, 5000, 5010, 5013, 5014, 5015]) {
        const out = frame(text.slice(0, cut), text.slice(cut));
        expect(out.map((l) => (typeof l === 'string' ? l : `TOO LONG ${l.head.slice(0, 7)}`)), `cut ${cut}`)
          .to.deep.equal(['TOO LONG big SET', 'next GET none.x']);
      }
    });

    it('yields ONE item for a huge line arriving in many chunks, without buffering it', () => {
      const f = new LineFramer();
      const out: FramedLine[] = [];
      out.push(...feed(f, 'r9 SET '));
      const block = Buffer.alloc(1000, 0x61);
      for (let i = 0; i < 2000; i++) {
        f.push(block);
        out.push(...f.lines());
        expect(f.bufferedBytes).to.be.at.most(MAX_LINE_BYTES + 1);
      }
      out.push(...feed(f, 'tail\nr10 STAT\n'));
      expect(out).to.have.length(2);
      expect((out[0] as { head: string }).head.startsWith('r9 SET aaa')).to.equal(true);
      expect(out[1]).to.equal('r10 STAT');
      expect(f.bufferedBytes).to.equal(0);
    });

    it('gives the whole head when the line starts in a carried-over tail', () => {
      const f = new LineFramer();
      expect(feed(f, 'ok 1\nrid-7 SET ')).to.deep.equal(['ok 1']);
      const out = feed(f, `${'z'.repeat(6000)}\n`);
      expect(out).to.have.length(1);
      const head = (out[0] as { head: string }).head;
      expect(head.startsWith('rid-7 SET zzz')).to.equal(true);
      expect(head.length).to.equal(MAX_LINE_BYTES);
    });
  });

  it('frames 10 000 pipelined commands in one 300 KB chunk quickly', () => {
    const parts: string[] = [];
    for (let i = 0; i < 10000; i++) parts.push(`p${i} SET pipe.job.number.${i} ${1_775_822_400_000_000_000n + BigInt(i)}\n`);
    const chunk = Buffer.from(parts.join(''));
    expect(chunk.length).to.be.greaterThan(290_000);
    const f = new LineFramer();
    const started = process.hrtime.bigint();
    f.push(chunk);
    const lines = [...f.lines()];
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(lines).to.have.length(10000);
    expect(lines[0]).to.equal(parts[0]!.slice(0, -1));
    expect(lines[9999]).to.equal(parts[9999]!.slice(0, -1));
    // Generous bound: linear framing takes a few ms; a quadratic one takes seconds.
    expect(ms).to.be.lessThan(500);
  });

  it('keeps unconsumed lines when the consumer stops early', () => {
    const f = new LineFramer();
    f.push(Buffer.from('a\nb\nc\n'));
    for (const l of f.lines()) {
      expect(l).to.equal('a');
      break;
    }
    expect([...f.lines()]).to.deep.equal(['b', 'c']);
    expect([...f.lines()]).to.deep.equal([]);
  });
});
