// The TCP protocol on the real daemon: every command, response shape and error of the spec.
import { expect } from 'chai';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';

describe('TCP protocol', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let c: LineClient;
  before(async () => { daemon = await Daemon.start({ workers: 2 }); });
  after(async () => { await daemon?.stop(); });
  beforeEach(async () => { c = await LineClient.connect(daemon.tcp); });
  afterEach(() => c.close());

  it('SET then GET, with integer nanoseconds', async () => {
    expect(await c.request('1', 'SET p.a 2775822400123456789')).to.deep.equal(['1 OK']);
    expect(await c.request('2', 'GET p.a')).to.deep.equal(['2 OK planned 2775822400123456789']);
  });

  it('SET accepts the datetime as two tokens, one quoted token, and ISO 8601 with offsets', async () => {
    await c.request('1', 'SET p.dt1 2030-01-02 03:04:05');
    expect(await c.request('2', 'GET p.dt1')).to.deep.equal(['2 OK planned 1893553445000000000']);
    await c.request('3', 'SET p.dt2 "2030-01-02 03:04:05"');
    expect(await c.request('4', 'GET p.dt2')).to.deep.equal(['4 OK planned 1893553445000000000']);
    await c.request('5', 'SET p.dt3 2030-01-02T05:04:05.000000001+02:00');
    expect(await c.request('6', 'GET p.dt3')).to.deep.equal(['6 OK planned 1893553445000000001']);
  });

  it('SET errors: missing or malformed arguments', async () => {
    for (const [args, re] of [
      ['SET', /invalid_args/], ['SET p.x', /invalid_args/], ['SET p.x soon', /invalid_args/],
      ['SET p.x 2026-02-31 00:00:00', /invalid_args/], ['SET p.x 2263-01-01T00:00:00Z', /invalid_args/],
      ['SET p.x 99999999999999999999', /invalid_args/], ['SET p.x 2030-01-01T00:00:00', /invalid_args/],
      ['SET bad/id 1', /invalid_args/], ['SET p.x 1 2 3', /invalid_args/],
    ] as const) {
      const lines = await c.request('e', args);
      expect(lines, args).to.have.length(1);
      expect(lines[0], args).to.match(/^e ERROR invalid_args \S/).and.match(re);
    }
    expect(await c.request('g', 'GET p.x')).to.deep.equal(['g ERROR not_found job "p.x" does not exist']);
  });

  it('GET errors', async () => {
    expect(await c.request('1', 'GET nope.nothing')).to.deep.equal(['1 ERROR not_found job "nope.nothing" does not exist']);
    expect((await c.request('2', 'GET'))[0]).to.match(/^2 ERROR invalid_args /);
  });

  it('QUERY lists matching jobs, all jobs without a pattern, and only OK when nothing matches', async () => {
    await c.request('1', 'SET q.one 4000000000000000100');
    await c.request('2', 'SET q.two 4000000000000000200');
    await c.request('3', 'SET qq.three 4000000000000000300');
    const lines = await c.request('4', 'QUERY q.');
    expect(lines.at(-1)).to.equal('4 OK');
    expect(lines.slice(0, -1).sort()).to.deep.equal(['4 q.one planned 4000000000000000100', '4 q.two planned 4000000000000000200']);
    const all = await c.request('5', 'QUERY');
    expect(all.filter((l) => / q\.| qq\./.test(l))).to.have.length(3);
    expect(await c.request('6', 'QUERY zzz.none')).to.deep.equal(['6 OK']);
  });

  it('REMOVE deletes, then not_found', async () => {
    await c.request('1', 'SET r.gone 4000000000000000005');
    expect(await c.request('2', 'REMOVE r.gone')).to.deep.equal(['2 OK']);
    expect(await c.request('3', 'REMOVE r.gone')).to.deep.equal(['3 ERROR not_found job "r.gone" does not exist']);
    expect(await c.request('4', 'GET r.gone')).to.deep.equal(['4 ERROR not_found job "r.gone" does not exist']);
  });

  it('RULE SET for every runner kind, listed back by LISTRULES in a form that can be pasted back', async () => {
    const rules = [
      'ls.sh ls.sh. shell "echo \\"hi\\" > /dev/null"',
      'ls.direct ls.direct. direct /bin/echo a "b c"',
      'ls.awf ls.awf. awf deploy --input env=prod --input v=2',
      'ls.http ls.http. http POST http://127.0.0.1:9/hook',
      'ls.amqp ls.amqp. amqp amqp://guest:guest@127.0.0.1:5672/ ex rk',
      'ls.redis ls.redis. redis redis://127.0.0.1:6379/0 RPUSH q',
    ];
    for (const [i, r] of rules.entries()) expect(await c.request(`r${i}`, `RULE SET ${r}`), r).to.deep.equal([`r${i} OK`]);
    const listed = await c.request('l', 'LISTRULES ignored trailing args');
    expect(listed.at(-1)).to.equal('l OK');
    const mine = listed.filter((l) => l.startsWith('l ls.')).map((l) => l.slice(2)).sort();
    expect(mine).to.deep.equal([...rules].sort());
  });

  it('RULE SET validation errors store nothing', async () => {
    for (const args of [
      'RULE SET v.a v.a redis redis://127.0.0.1:6379 GET k',
      'RULE SET v.a v.a redis rediss://127.0.0.1:6379 SET k',
      'RULE SET v.a v.a redis redis://127.0.0.1:6379 SET',
      'RULE SET v.a v.a redis redis://127.0.0.1:6379 SET k extra',
      'RULE SET v.a v.a amqp amqps://h/ ex rk',
      'RULE SET v.a v.a http FETCH http://x/',
      'RULE SET v.a v.a http GET ftp://x/',
      'RULE SET v.a v.a shell echo hi',
      'RULE SET v.a v.a direct',
      'RULE SET v.a v.a awf wf --input novalue',
      'RULE SET v.a v.a teleport x',
      'RULE SET v.a',
      'RULE SET',
    ]) {
      const lines = await c.request('v', args);
      expect(lines, args).to.have.length(1);
      expect(lines[0], args).to.match(/^v ERROR invalid_args \S/);
    }
    const listed = await c.request('l', 'LISTRULES');
    expect(listed.some((l) => l.startsWith('l v.a '))).to.equal(false);
  });

  it('REMOVERULE', async () => {
    await c.request('1', 'RULE SET rr.x rr.x shell true');
    expect(await c.request('2', 'REMOVERULE rr.x')).to.deep.equal(['2 OK']);
    expect(await c.request('3', 'REMOVERULE rr.x')).to.deep.equal(['3 ERROR not_found rule "rr.x" does not exist']);
  });

  it('skips malformed lines and unknown instructions silently, and keeps the connection', async () => {
    c.write('justonetoken\n');
    c.write('u1 FROBNICATE x\n');
    c.write('u2 RULE GET x\n');
    c.write('u3 set lower.case 1\n');
    c.write('u4 GET "unterminated\n');
    c.write('\n\r\n');
    expect(await c.request('sync', 'GET none.here')).to.deep.equal(['sync ERROR not_found job "none.here" does not exist']);
    expect(c.pending()).to.equal(0);
  });

  it('strips CR before LF', async () => {
    c.write('crlf SET cr.lf 4000000000000000042\r\n');
    expect(await c.collect('crlf')).to.deep.equal(['crlf OK']);
    expect(await c.request('g', 'GET cr.lf')).to.deep.equal(['g OK planned 4000000000000000042']);
  });

  it('waits for the rest of an incomplete line', async () => {
    c.write('part SET par');
    c.write('tial.line 4000000000000000007');
    c.write('\n');
    expect(await c.collect('part')).to.deep.equal(['part OK']);
  });

  it('answers a 5000-byte line with invalid_args and serves the next command on the same connection', async () => {
    c.write(`big SET ${'x'.repeat(5000)} 1\nnext GET none.x\n`);
    expect(await c.collect('big')).to.deep.equal(['big ERROR invalid_args line too long']);
    expect(await c.collect('next')).to.deep.equal(['next ERROR not_found job "none.x" does not exist']);
  });

  it('answers 10 000 pipelined commands sent in one write, in order', async () => {
    const n = 10000;
    let text = '';
    for (let i = 0; i < n; i++) text += i % 2 === 0 ? `p${i} SET pipe.${i} ${4000000000000001000n + BigInt(i)}\n` : `p${i} GET pipe.${i - 1}\n`;
    c.write(text);
    for (let i = 0; i < n; i++) {
      const line = await c.readLine();
      expect(line).to.equal(i % 2 === 0 ? `p${i} OK` : `p${i} OK planned ${4000000000000001000n + BigInt(i - 1)}`);
    }
  });

  it('a client that half-closes after sending still gets every reply, then the connection ends', async () => {
    c.write('h1 SET half.close 4000000000000000009\nh2 GET half.close\n');
    c.socket.end();
    expect(await c.collect('h1')).to.deep.equal(['h1 OK']);
    expect(await c.collect('h2')).to.deep.equal(['h2 OK planned 4000000000000000009']);
    await c.waitClosed();
  });
});
