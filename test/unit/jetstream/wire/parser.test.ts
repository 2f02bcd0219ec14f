// The replay's reader of the NATS wire protocol (lib/jetstream/wire/parser.ts) and its check
// of JetStream deliveries (stream-scan.ts DeliveryLedger), on bytes made here: MSG and HMSG
// (headers, status messages), every way a frame can be split across reads, a large frame, and
// what must fail loudly: a gap in the delivery sequence, a redelivery, missing metadata, bytes
// that are not NATS. The same parser against real servers: test/integration/cluster-replay-wire.test.ts.
import { expect } from 'chai';
import { WireParser, WireProtocolError, type WireFrame } from '../../../../lib/jetstream/wire/parser.ts';
import { DeliveryLedger } from '../../../../lib/jetstream/wire/stream-scan.ts';
import { prng } from '../../../helpers/prng.ts';

interface Seen {
  subject: string;
  sid: number;
  reply: string;
  headers: string;
  payload: string;
  status: number;
}

function collect(): { parser: WireParser; seen: Seen[]; lines: string[] } {
  const seen: Seen[] = [];
  const lines: string[] = [];
  const parser = new WireParser({
    message: (f: WireFrame) => seen.push({
      subject: f.subject, sid: f.sid, reply: f.reply, headers: f.headers,
      payload: f.buf.toString('latin1', f.payloadStart, f.end), status: f.status,
    }),
    control: (line) => lines.push(line),
  });
  return { parser, seen, lines };
}

function msg(subject: string, sid: number, reply: string | null, payload: string): string {
  return `MSG ${subject} ${sid}${reply === null ? '' : ` ${reply}`} ${Buffer.byteLength(payload)}\r\n${payload}\r\n`;
}

function hmsg(subject: string, sid: number, reply: string | null, headers: string, payload: string): string {
  const h = Buffer.byteLength(headers);
  return `HMSG ${subject} ${sid}${reply === null ? '' : ` ${reply}`} ${h} ${h + Buffer.byteLength(payload)}\r\n${headers}${payload}\r\n`;
}

const HEADERS = 'NATS/1.0\r\nNats-Msg-Id: import/x:1\r\nNats-Expected-Last-Sequence: 0\r\n\r\n';
const ack = (stream: string, consumer: string, seq: number, delivery: number, pending: number) =>
  `$JS.ACK.${stream}.${consumer}.1.${seq}.${delivery}.1764090656192728207.${pending}`;

/** Feeds `text` in pieces cut at `cuts` (byte offsets). */
function feedCut(parser: WireParser, text: string, cuts: number[]): void {
  const bytes = Buffer.from(text, 'latin1');
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    parser.feed(bytes.subarray(at, cut));
    at = cut;
  }
}

describe('jetstream/wire-parser WireParser', () => {
  const stream = [
    'INFO {"server_name":"n1","headers":true}\r\n',
    msg('tickd.c.j.a', 1, null, 'hello'),
    'PING\r\n',
    hmsg('tickd.c.j.b', 2, ack('c', 'r1', 7, 1, 3), HEADERS, 'payload with \r\n inside'),
    msg('tickd.c.j.c', 12, '_INBOX.x', ''),
    hmsg('_INBOX.abc', 3, null, 'NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 17\r\nNats-Pending-Bytes: 0\r\n\r\n', ''),
    '+OK\r\n-ERR \'Authorization Violation\'\r\n',
  ].join('');
  const expected: Seen[] = [
    { subject: 'tickd.c.j.a', sid: 1, reply: '', headers: '', payload: 'hello', status: 0 },
    { subject: 'tickd.c.j.b', sid: 2, reply: ack('c', 'r1', 7, 1, 3), headers: HEADERS, payload: 'payload with \r\n inside', status: 0 },
    { subject: 'tickd.c.j.c', sid: 12, reply: '_INBOX.x', headers: '', payload: '', status: 0 },
    {
      subject: '_INBOX.abc', sid: 3, reply: '',
      headers: 'NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 17\r\nNats-Pending-Bytes: 0\r\n\r\n', payload: '', status: 408,
    },
  ];
  const expectedLines = ['INFO {"server_name":"n1","headers":true}', 'PING', '+OK', '-ERR \'Authorization Violation\''];

  it('parses MSG (with and without reply), HMSG (headers, a status) and control lines in one read', () => {
    const { parser, seen, lines } = collect();
    parser.feed(Buffer.from(stream, 'latin1'));
    expect(seen).to.deep.equal(expected);
    expect(lines).to.deep.equal(expectedLines);
  });

  it('gives the same for every split into two reads and for one byte per read', () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const { parser, seen, lines } = collect();
      feedCut(parser, stream, [cut]);
      expect(seen, `cut at ${cut}`).to.deep.equal(expected);
      expect(lines, `cut at ${cut}`).to.deep.equal(expectedLines);
    }
    const { parser, seen } = collect();
    feedCut(parser, stream, Array.from({ length: stream.length - 1 }, (_, i) => i + 1));
    expect(seen).to.deep.equal(expected);
  });

  it('gives the same for random splits, reading through space()/filled() as a socket does', () => {
    const rnd = prng(19);
    const many = Array.from({ length: 200 }, (_, i) => hmsg(`s.${i}`, 1, ack('c', 'r', i + 1, i + 1, 199 - i), HEADERS, 'x'.repeat(i % 50))).join('');
    const bytes = Buffer.from(many, 'latin1');
    for (let run = 0; run < 20; run++) {
      const { parser, seen } = collect();
      for (let at = 0; at < bytes.length;) {
        const space = parser.space();
        const n = Math.min(space.length, bytes.length - at, 1 + Math.floor(rnd() * 700));
        bytes.copy(space, 0, at, at + n);
        at += n;
        parser.filled(n);
      }
      expect(seen.map((s) => s.subject)).to.deep.equal(Array.from({ length: 200 }, (_, i) => `s.${i}`));
      expect(seen.map((s) => s.payload.length)).to.deep.equal(Array.from({ length: 200 }, (_, i) => i % 50));
    }
  });

  it('takes a frame larger than its buffer, in many reads', () => {
    const big = 'y'.repeat(3 << 20);
    const { parser, seen } = collect();
    const bytes = Buffer.from(msg('big', 5, null, big) + msg('after', 5, null, 'z'), 'latin1');
    for (let at = 0; at < bytes.length; at += 60_000) parser.feed(bytes.subarray(at, Math.min(bytes.length, at + 60_000)));
    expect(seen.map((s) => [s.subject, s.payload.length])).to.deep.equal([['big', big.length], ['after', 1]]);
  });

  it('refuses what is not NATS: a bad control line, bad numbers, a payload not ended by CRLF', () => {
    for (const bad of ['MSG a 1\r\n', 'MSG a 1 2 3 4\r\nxxxx\r\n', 'MSGX a 1 2\r\nxx\r\n', 'MSG a x 2\r\nxx\r\n', 'HMSG a 1 9 3\r\nxxx\r\n', 'MSG a 1 2\r\nxxxx\r\n']) {
      const { parser } = collect();
      expect(() => parser.feed(Buffer.from(bad, 'latin1')), bad).to.throw(WireProtocolError);
    }
  });

  it('refuses a frame said to be larger than NATS allows (64 MiB) before its buffer grows', () => {
    const { parser } = collect();
    expect(() => parser.feed(Buffer.from('MSG a 1 999999999999999\r\n', 'latin1'))).to.throw(WireProtocolError, /bad numbers/);
    expect(parser.space().length).to.be.below(1 << 20);
  });
});

describe('jetstream/stream-scan DeliveryLedger', () => {
  /** The frames of `text`, each given to `take` (the frame is valid only during the call). */
  function deliver(text: string, take: (f: WireFrame) => void): void {
    new WireParser({ message: take, control: () => {} }).feed(Buffer.from(text, 'latin1'));
  }

  it('reads the stream sequence, the delivery sequence and the pending count of each delivery', () => {
    const ledger = new DeliveryLedger('c1', 'replay_X');
    const got: number[][] = [];
    deliver([
      hmsg('tickd.c1.j.a', 1, ack('c1', 'replay_X', 4, 1, 2), HEADERS, 'a'),
      msg('tickd.c1.j.b', 1, ack('c1', 'replay_X', 9, 2, 1), 'b'),
      // The v2 form: domain and account hash before the stream, a token after.
      msg('tickd.c1.j.c', 1, '$JS.ACK.hub.ACCHASH.c1.replay_X.1.12.3.1764090656192728207.0.tok', 'c'),
    ].join(''), (f) => { ledger.take(f); got.push([ledger.seq, ledger.delivered, ledger.pending]); });
    expect(got).to.deep.equal([[4, 1, 2], [9, 2, 1], [12, 3, 0]]);
  });

  it('fails on a gap in the delivery sequence: a message lost on the way is a record lost', () => {
    const ledger = new DeliveryLedger('c1', 'r');
    expect(() => deliver(msg('a', 1, ack('c1', 'r', 1, 1, 5), 'a') + msg('b', 1, ack('c1', 'r', 3, 3, 3), 'b'), (f) => ledger.take(f)))
      .to.throw(/delivered 3 after 1: messages were lost/);
  });

  it('fails on a redelivery and on a reply without the consumer\'s metadata', () => {
    const cases = [
      msg('a', 1, '$JS.ACK.c1.r.2.1.1.1764090656192728207.0', 'a'), // delivered twice
      msg('a', 1, '$JS.ACK.c1.other.1.1.1.1764090656192728207.0', 'a'), // another consumer
      msg('a', 1, '$JS.ACK.c1.r.1.1', 'a'), // cut short
      msg('a', 1, null, 'a'), // no reply at all
    ];
    for (const text of cases) {
      expect(() => deliver(text, (f) => new DeliveryLedger('c1', 'r').take(f)), text).to.throw(/without the expected JetStream metadata/);
    }
  });
});
