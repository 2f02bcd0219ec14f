// The per-connection protocol state machine with a fake transport and a fake dispatch (no
// sockets): the AUTH flow (tickd-protocol(7) AUTHENTICATION), namespace
// scoping before dispatch, and replies leaving in the order their lines arrived.
import { expect } from 'chai';
import sinon from 'sinon';
import { LineFramer } from '../../../lib/protocol/framer.ts';
import { TCP_PAGE_ENTRIES } from '../../../lib/domain/page.ts';
import { DONE, harness, settled, TOKENS } from './session-harness.ts';

const LIST_ALL = { op: 'job.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES } as const;

describe('protocol/session', () => {
  describe('without an auth_file', () => {
    it('dispatches commands at once with full access (lists unscoped)', () => {
      const h = harness(null);
      expect(h.session.authenticated).to.equal(true);
      h.feed('1 GET z.x\n2 QUERY\n');
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'job.get', id: 'z.x' }, LIST_ALL]);
    });

    it('answers AUTH with OK as a no-op (clients that always send it keep working)', () => {
      const h = harness(null);
      h.feed('AUTH whatever\n');
      expect(h.written()).to.equal('OK\n');
      expect(h.closes).to.equal(0);
    });
  });

  describe('AUTH', () => {
    it('a known secret gives OK and then commands run in its namespace', () => {
      const h = harness(TOKENS);
      expect(h.session.authenticated).to.equal(false);
      h.feed('AUTH secret-a\n');
      expect(h.written()).to.equal('OK\n');
      expect(h.session.authenticated).to.equal(true);
      h.feed('1 QUERY\n');
      expect(h.pending[0]!.cmd).to.deep.equal({ ...LIST_ALL, scope: 'a.' });
      expect(h.requests[0]).to.include({ rid: '', instruction: 'AUTH', success: true });
    });

    it('AUTH and commands pipelined in one chunk, or AUTH split across chunks', () => {
      const h = harness(TOKENS);
      h.feed('AU');
      h.feed('TH secret-admin\r');
      expect(h.written()).to.equal('');
      h.feed('\n1 STAT\n');
      expect(h.written()).to.equal('OK\n');
      expect(h.pending.map((p) => p.cmd.op)).to.deep.equal(['stat']);
    });

    for (const [name, text, expected] of [
      ['a command before AUTH', '1 STAT\n', 'ERROR auth_required\n'],
      ['an unknown instruction before AUTH', '1 NOPE x\n', 'ERROR auth_required\n'],
      ['AUTH preceded by a request id', '1 AUTH secret-a\n', 'ERROR auth_required\n'],
      ['AUTH without a secret', 'AUTH\n', 'ERROR auth_required\n'],
      ['AUTH with an empty quoted secret', 'AUTH ""\n', 'ERROR auth_required\n'],
      ['an unknown secret', 'AUTH secret-b\n', 'ERROR auth_failed\n'],
      ['a secret differing only in case', 'AUTH SECRET-A\n', 'ERROR auth_failed\n'],
      ['a prefix of a secret', 'AUTH secret-\n', 'ERROR auth_failed\n'],
      ['an over-long line before AUTH', `AUTH ${'x'.repeat(5000)}\n`, 'ERROR auth_required\n'],
    ] as const) {
      it(`${name}: "${expected.trim()}" (no request id, no message), then close; later lines are ignored`, () => {
        const h = harness(TOKENS);
        h.feed(`${text}AUTH secret-admin\n2 STAT\n`);
        expect(h.written()).to.equal(expected);
        expect(h.closes).to.equal(1);
        expect(h.session.authenticated).to.equal(false);
        expect(h.session.isClosed).to.equal(true);
        h.feed('AUTH secret-admin\n3 STAT\n');
        expect(h.written()).to.equal(expected);
        expect(h.pending).to.have.length(0);
        expect(h.closes).to.equal(1);
      });
    }

    it('bytes arriving after a pre-auth close are not even framed (nothing piles up)', () => {
      const h = harness(TOKENS);
      h.feed('AUTH wrong\n');
      const push = sinon.spy(LineFramer.prototype, 'push');
      try {
        h.feed(Buffer.alloc(64 * 1024, '1 STAT\n'));
        expect(push.callCount).to.equal(0);
      } finally {
        push.restore();
      }
    });

    it('a failed AUTH is reported with success false and no request id', () => {
      const h = harness(TOKENS);
      h.feed('AUTH wrong\n');
      expect(h.requests).to.have.length(1);
      expect(h.requests[0]).to.include({ rid: '', instruction: 'AUTH', success: false });
    });

    it('malformed lines before AUTH are skipped without closing (tickd-protocol(7) GRAMMAR)', () => {
      const h = harness(TOKENS);
      h.feed('\n\r\nlonely\n"unterminated AUTH secret-a\n');
      expect(h.written()).to.equal('');
      expect(h.closes).to.equal(0);
      h.feed('AUTH secret-a\n');
      expect(h.written()).to.equal('OK\n');
    });

    it('AUTH after success is ignored: no reply, the principal is kept, the connection stays', () => {
      const h = harness(TOKENS);
      h.feed('AUTH secret-a\nAUTH secret-admin\nAUTH nonsense\nAUTH\n1 GET b.x\n');
      expect(h.written()).to.equal('OK\n1 ERROR auth_denied insufficient namespace scope\n');
      expect(h.closes).to.equal(0);
      expect(h.pending).to.have.length(0);
    });
  });

  describe('namespaces', () => {
    it('commands outside the namespace are denied without reaching dispatch; the connection stays', () => {
      const h = harness(TOKENS);
      h.feed('AUTH secret-a\n');
      h.feed('1 SET b.x 5\n2 RULE SET a.r b. shell true\n3 RULE SET a.r "" shell true\n4 REMOVERULE b.r\n5 REMOVE b.x\n');
      const denied = [1, 2, 3, 4, 5].map((n) => `${n} ERROR auth_denied insufficient namespace scope\n`).join('');
      expect(h.written()).to.equal(`OK\n${denied}`);
      expect(h.pending).to.have.length(0);
      expect(h.closes).to.equal(0);
      h.feed('6 STAT\n7 SET a.x 5\n');
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'stat' }, { op: 'job.set', id: 'a.x', execution: 5n }]);
    });

    it('ATTEMPTS and RETRY are scoped like GET: denied outside, dispatched inside; RETRY\'s job reply is written as GET\'s', async () => {
      const h = harness(TOKENS);
      h.feed('AUTH secret-a\n1 ATTEMPTS b.x\n2 RETRY b.x\n3 ATTEMPTS a.x\n4 RETRY a.x\n');
      expect(h.written()).to.equal('OK\n1 ERROR auth_denied insufficient namespace scope\n2 ERROR auth_denied insufficient namespace scope\n');
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'job.get', id: 'a.x', history: true }, { op: 'job.retry', id: 'a.x' }]);
      const job = { id: 'a.x', status: 'planned', execution: 7n } as const;
      h.pending[0]!.answer({ ok: true, kind: 'job', job, attempts: [] });
      h.pending[1]!.answer({ ok: true, kind: 'job', job });
      await settled();
      expect(h.written()).to.match(/\n3 OK\n4 OK planned 7\n$/);
    });

    it('argument errors are reported before the namespace check', () => {
      const h = harness(TOKENS);
      h.feed('AUTH secret-a\n1 GET\n');
      expect(h.written()).to.match(/^OK\n1 ERROR invalid_args /);
    });
  });

  describe('reply order', () => {
    it('replies leave in line order even when dispatch answers out of order', async () => {
      const h = harness(null);
      h.feed('1 SET x.1 1\n2 GET x.1\n3 SET x.2 2\n');
      h.pending[2]!.answer(DONE);
      h.pending[1]!.answer({ ok: false, code: 'not_found', message: 'job "x.1" does not exist' });
      await settled();
      expect(h.written()).to.equal('');
      h.pending[0]!.answer(DONE);
      await settled();
      expect(h.written()).to.equal('1 OK\n2 ERROR not_found job "x.1" does not exist\n3 OK\n');
    });

    it('replies answered in one run leave in one write, once the run is over', async () => {
      const h = harness(null);
      h.feed('1 SET x.1 1\n2 GET x.1\n3 SET x.2 2\n');
      for (const p of h.pending) p.answer(DONE); // as a batch of replies from the primary arrives
      expect(h.writes).to.equal(0);
      await settled();
      expect([h.writes, h.written()]).to.deep.equal([1, '1 OK\n2 OK\n3 OK\n']);
    });

    it('whenAnswered runs after the last reply is written', async () => {
      const h = harness(null);
      h.feed('1 SET x.1 1\n');
      let seen: string | null = null;
      h.session.whenAnswered(() => { seen = h.written(); });
      h.pending[0]!.answer(DONE);
      await settled();
      expect(seen).to.equal('1 OK\n');
    });

    it('an immediate reply (denied, invalid_args) waits behind an unanswered earlier line', async () => {
      const h = harness(TOKENS);
      h.feed('AUTH secret-a\n1 GET a.x\n2 GET b.x\n3 GET\n');
      expect(h.written()).to.equal('OK\n');
      h.pending[0]!.answer({ ok: true, kind: 'job', job: { id: 'a.x', execution: 7n, status: 'planned' } });
      await settled();
      expect(h.written()).to.match(/^OK\n1 OK planned 7\n2 ERROR auth_denied insufficient namespace scope\n3 ERROR invalid_args /);
    });

    it('replies arriving after the connection ended are dropped', () => {
      const h = harness(null);
      h.feed('1 STAT\n');
      h.session.end();
      h.pending[0]!.answer(DONE);
      expect(h.written()).to.equal('');
      let answered = false;
      h.session.whenAnswered(() => { answered = true; });
      expect(answered).to.equal(true);
    });
  });
});
