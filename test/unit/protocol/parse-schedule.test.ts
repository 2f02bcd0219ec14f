// SCHEDULE lines (tickd-protocol(7) SCHEDULES): every sub-instruction, the defaults it fills in,
// and every refusal, each naming the argument or the field at fault.
import { expect } from 'chai';
import { parseLine, type ParsedLine } from '../../../lib/protocol/parse.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';
import type { Command } from '../../../lib/domain/command.ts';
import type { Schedule } from '../../../lib/domain/schedule.ts';
import { TCP_PAGE_ENTRIES } from '../../../lib/domain/page.ts';

function parse(line: string): ParsedLine {
  const tokens = tokenize(line);
  if (tokens === null) throw new Error(`malformed test line: ${line}`);
  return parseLine(tokens);
}

const command = (line: string): Command => {
  const p = parse(line);
  expect(p.kind, `${line} -> ${JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`).to.equal('command');
  return (p as { cmd: Command }).cmd;
};

const scheduleOf = (line: string): Schedule => {
  const cmd = command(line);
  expect(cmd.op, line).to.equal('schedule.set');
  return (cmd as Extract<Command, { op: 'schedule.set' }>).schedule;
};

/** The invalid_args message of a line, asserting rid and code on the way. */
const invalid = (line: string): string => {
  const p = parse(line);
  expect(p.kind, line).to.equal('error');
  const e = p as Extract<ParsedLine, { kind: 'error' }>;
  expect(e.rid, line).to.equal(line.split(' ')[0]);
  expect(e.reply.code, line).to.equal('invalid_args');
  return e.reply.message;
};

const H = 3_600_000_000_000n;
const S = 1_000_000_000n;

describe('protocol/parse SCHEDULE', () => {
  describe('SET', () => {
    it('fills in every default', () => {
      expect(scheduleOf('s SCHEDULE SET nightly.backup "cron=30 2 * * *"')).to.deep.equal({
        id: 'nightly.backup', cron: '30 2 * * *', every: null, tz: 'UTC', start: null, end: null, limit: null,
        jitter: 0n, missed: 'once', catchup: H, overlap: 'allow', paused: false, keep: 10,
      });
    });

    it('takes every field, in any order, the value being the text after the first =', () => {
      const s = scheduleOf('s SCHEDULE SET a.b keep=3 paused=true overlap=queue catchup=2h missed=all jitter=30s limit=7 '
        + 'end=2030-01-02T00:00:00Z "start=2030-01-01 00:00:00" tz=Europe/Berlin every=1h30m');
      expect(s).to.deep.equal({
        id: 'a.b', cron: null, every: H + 30n * 60n * S, tz: 'Europe/Berlin', start: 1893456000000000000n, end: 1893542400000000000n,
        limit: 7, jitter: 30n * S, missed: 'all', catchup: 2n * H, overlap: 'queue', paused: true, keep: 3,
      });
      expect(scheduleOf('s SCHEDULE SET a.b every=1s start=1700000000000000000').start).to.equal(1700000000000000000n);
      // Six fields (seconds first); a quoted section may sit inside the token too.
      expect(scheduleOf('s SCHEDULE SET a.b cron="0 30 2 * * *"').cron).to.equal('0 30 2 * * *');
      expect(scheduleOf('s SCHEDULE SET a.b "cron=0 0 1 * MON" missed=skip overlap=skip keep=0')).to.include({ cron: '0 0 1 * MON', missed: 'skip', overlap: 'skip', keep: 0 });
    });

    it('identifier errors say "schedule identifier"', () => {
      expect(invalid('e SCHEDULE SET')).to.equal('missing schedule identifier');
      expect(invalid('e SCHEDULE SET bad/id every=1m')).to.equal("schedule identifier contains invalid character '/' (allowed: letters, digits, . - _ :)");
      expect(invalid('e SCHEDULE SET "" every=1m')).to.equal('schedule identifier must not be empty');
      // Room is kept for what an occurrence's job identifier adds.
      expect(invalid(`e SCHEDULE SET ${'x'.repeat(991)} every=1m`)).to.equal('schedule identifier too long (max 990 bytes)');
      expect(scheduleOf(`e SCHEDULE SET ${'x'.repeat(990)} every=1m`).id).to.have.length(990);
    });

    it('a token that is not key=value, or a key given twice, is named', () => {
      expect(invalid('e SCHEDULE SET a.b every=1m hourly')).to.equal('expected key=value, not "hourly"');
      expect(invalid('e SCHEDULE SET a.b =1m')).to.equal('expected key=value, not "=1m"');
      expect(invalid('e SCHEDULE SET a.b every=1m every=2m')).to.equal('every: given twice');
      expect(invalid('e SCHEDULE SET a.b "cron=* * * * *" tz=UTC tz=UTC')).to.equal('tz: given twice');
    });

    it('a refused field is named first, then why', () => {
      const cases: Array<[string, RegExp]> = [
        ['', /^cron: give exactly one of cron and every$/],
        ['every=1m "cron=* * * * *"', /^every: give exactly one of cron and every$/],
        ['cron=', /^cron: must be a cron expression/],
        ['"cron=61 * * * *"', /^cron: /],
        ['"cron=* * *"', /^cron: /],
        ['every=soon', /^every: not a duration such as 30s/],
        ['every=500ms', /^every: must be from 1s to 366d$/],
        ['every=1m tz=Mars/Olympus', /^tz: "Mars\/Olympus" is not a time zone/],
        ['every=1m tz=+01:00', /^tz: "\+01:00" is not an IANA time zone name/],
        ['every=1m start=tomorrow', /^start: /],
        ['every=1m start=2030-01-02T00:00:00Z end=2030-01-01T00:00:00Z', /^end: must be after start$/],
        ['every=1m limit=0', /^limit: must be an integer from 1 to 2147483647$/],
        ['every=1m limit=1.5', /^limit: /],
        ['every=1m jitter=1m', /^jitter: must be shorter than every/],
        ['"cron=* * * * *" jitter=2d', /^jitter: must be at most 1d$/],
        ['every=1m catchup=0s', /^catchup: must be more than 0s/],
        ['every=1m missed=never', /^missed: must be skip, once or all$/],
        ['every=1m overlap=wait', /^overlap: must be allow, skip or queue$/],
        ['every=1m paused=yes', /^paused: must be true or false$/],
        ['every=1m keep=1001', /^keep: must be an integer from 0 to 1000$/],
        ['every=1m colour=blue', /^colour: unknown field \(known: cron, every, tz,/],
        ['every=1m __proto__=x', /^__proto__: unknown field/],
        ['every=1m "we ird=x"', /^"we ird": unknown field/],
      ];
      for (const [opts, re] of cases) expect(invalid(`e SCHEDULE SET a.b ${opts}`), opts).to.match(re);
    });
  });

  describe('the one-identifier sub-instructions', () => {
    it('GET, REMOVE, PAUSE, RESUME, RUN', () => {
      expect(command('g SCHEDULE GET a.b')).to.deep.equal({ op: 'schedule.get', id: 'a.b' });
      expect(command('g SCHEDULE REMOVE a.b')).to.deep.equal({ op: 'schedule.remove', id: 'a.b' });
      expect(command('g SCHEDULE PAUSE a.b')).to.deep.equal({ op: 'schedule.pause', id: 'a.b', paused: true });
      expect(command('g SCHEDULE RESUME a.b')).to.deep.equal({ op: 'schedule.pause', id: 'a.b', paused: false });
      expect(command('g SCHEDULE RUN a.b')).to.deep.equal({ op: 'schedule.run', id: 'a.b' });
    });

    it('need exactly one valid identifier', () => {
      for (const sub of ['GET', 'REMOVE', 'PAUSE', 'RESUME', 'RUN']) {
        expect(invalid(`e SCHEDULE ${sub}`), sub).to.equal('missing schedule identifier');
        expect(invalid(`e SCHEDULE ${sub} a,b`), sub).to.equal("schedule identifier contains invalid character ',' (allowed: letters, digits, . - _ :)");
        expect(invalid(`e SCHEDULE ${sub} a.b c`), sub).to.equal('unexpected argument "c" after the schedule identifier');
      }
    });
  });

  describe('NEXT and HISTORY', () => {
    it('take an optional count: NEXT 5 and HISTORY 10 by default, 1 to 100', () => {
      expect(command('n SCHEDULE NEXT a.b')).to.deep.equal({ op: 'schedule.next', id: 'a.b', n: 5 });
      expect(command('n SCHEDULE NEXT a.b 1')).to.deep.equal({ op: 'schedule.next', id: 'a.b', n: 1 });
      expect(command('n SCHEDULE NEXT a.b 100')).to.deep.equal({ op: 'schedule.next', id: 'a.b', n: 100 });
      expect(command('h SCHEDULE HISTORY a.b')).to.deep.equal({ op: 'schedule.occurrences', id: 'a.b', limit: 10 });
      expect(command('h SCHEDULE HISTORY a.b 42')).to.deep.equal({ op: 'schedule.occurrences', id: 'a.b', limit: 42 });
    });

    it('refuse a count out of range or not an integer, and anything after it', () => {
      for (const sub of ['NEXT', 'HISTORY']) {
        for (const bad of ['0', '101', '-1', '1.5', 'ten', '1000', '""']) {
          expect(invalid(`e SCHEDULE ${sub} a.b ${bad}`), `${sub} ${bad}`).to.match(/^count must be an integer from 1 to 100, not "/);
        }
        expect(invalid(`e SCHEDULE ${sub} a.b 3 4`)).to.equal('unexpected argument "4" after the count');
        expect(invalid(`e SCHEDULE ${sub}`)).to.equal('missing schedule identifier');
        expect(invalid(`e SCHEDULE ${sub} a/b`)).to.match(/^schedule identifier contains invalid character '\/'/);
      }
    });
  });

  describe('LIST', () => {
    it('an optional prefix, one TCP page at a time', () => {
      expect(command('l SCHEDULE LIST')).to.deep.equal({ op: 'schedule.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
      expect(command('l SCHEDULE LIST nightly.')).to.deep.equal({ op: 'schedule.list', prefix: 'nightly.', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
      expect(command('l SCHEDULE LIST ""')).to.include({ prefix: '' });
    });

    it('refuses a bad pattern and a second argument', () => {
      expect(invalid('e SCHEDULE LIST a/b')).to.match(/^pattern contains invalid character '\/'/);
      expect(invalid('e SCHEDULE LIST a. b.')).to.equal('unexpected argument "b." after the pattern');
    });
  });

  it('SCHEDULE without a known sub-instruction is an unknown instruction: ignored, as RULE without SET', () => {
    for (const line of ['u SCHEDULE', 'u SCHEDULE set a.b every=1m', 'u SCHEDULE LSIT', 'u SCHEDULE constructor x', 'u SCHEDULE __proto__', 'u schedule GET a']) {
      expect(parse(line), line).to.deep.equal({ kind: 'ignore' });
    }
  });
});
