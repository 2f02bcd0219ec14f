// The cluster's seals (tickd(8) SECURITY): the secret file's rules, HMAC-SHA256 as the
// standard computes it, a stream record's seal bound to its stream, subject, sequence and
// key, and a forwarded batch's seal: fresh, unseen, answered only by the holder of the key.
import { expect } from 'chai';
import { createHmac, hash } from 'node:crypto';
import { ClusterKeys, parseSecrets } from '../../../lib/jetstream/cluster-keys.ts';
import { FRESH_MS, NonceBook, openAnswer, openRequest, sealAnswer, sealRequest } from '../../../lib/jetstream/forward-seal.ts';
import { openRecord, SEAL_BYTES, sealRecord, UNKNOWN_KEY } from '../../../lib/jetstream/record-seal.ts';
import { readRecord, type Quarantined } from '../../../lib/jetstream/quarantine.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../../../lib/logfile/codec.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(40);

describe('jetstream seals', () => {
  it('reads a secret file: one secret a line, comments and blanks aside, each of 32 characters at least', () => {
    expect(parseSecrets(`# rotated 2026-11\n${A}\n\n  ${B}  \n`)).to.deep.equal([A, B]);
    expect(parseSecrets('# nothing\n\n')).to.match(/holds no secret/);
    expect(parseSecrets(`${A}\nshort\n`)).to.match(/secret 2 is 5 characters long; at least 32/);
  });

  it('computes HMAC-SHA256 under the key derived from the secret, with every key of the file', () => {
    const keys = new ClusterKeys([A, B]);
    const key = (s: string) => hash('sha256', `tickd cluster secret\0${s}`, 'buffer');
    const msg = [Buffer.from('hello '), Buffer.from('world')];
    expect(keys.mac(msg)!.equals(createHmac('sha256', key(A)).update('hello world').digest())).to.equal(true);
    const other = new ClusterKeys([B]);
    expect(other.mac(msg)!.equals(createHmac('sha256', key(B)).update('hello world').digest())).to.equal(true);
    // Sealed by B's holder, verified by a node that has A first and B second.
    expect(keys.verify(msg, other.signingId, other.mac(msg)!)).to.equal(true);
    expect(new ClusterKeys([A]).verify(msg, other.signingId, other.mac(msg)!)).to.equal(false);
  });

  it('opens a record only at the stream, subject and sequence it was sealed for, under a key it has', () => {
    const keys = new ClusterKeys([A]);
    const payload = encodeRecord({ t: 'job', job: { id: 'x', execution: 5n, status: 'planned' } }).subarray(FRAME_HEADER_BYTES);
    const body = sealRecord(keys, 's', 's.j.x', 7, payload);
    expect(body.length).to.equal(SEAL_BYTES + payload.length);
    expect(openRecord(keys, 's', 's.j.x', 7, body, 0, body.length)).to.equal(SEAL_BYTES);
    expect(openRecord(keys, 's', 's.j.y', 7, body, 0, body.length)).to.equal('a seal that does not verify');
    expect(openRecord(keys, 's', 's.j.x', 8, body, 0, body.length)).to.equal('a seal that does not verify');
    expect(openRecord(keys, 't', 's.j.x', 7, body, 0, body.length)).to.equal('a seal that does not verify');
    expect(openRecord(new ClusterKeys([B]), 's', 's.j.x', 7, body, 0, body.length)).to.match(new RegExp(`^${UNKNOWN_KEY}`));
    const flipped = Buffer.from(body);
    flipped[flipped.length - 1]! ^= 1;
    expect(openRecord(keys, 's', 's.j.x', 7, flipped, 0, flipped.length)).to.equal('a seal that does not verify');
    expect(openRecord(keys, 's', 's.j.x', 7, payload, 0, payload.length)).to.match(/shorter than a sealed record|no tickd seal/);
    expect(openRecord(keys, 's', 's.j.x', 7, Buffer.alloc(0), 0, 0)).to.equal('an empty message');
  });

  it('quarantines instead of throwing, and keeps a record sealed with a key it lacks', () => {
    const keys = new ClusterKeys([A]);
    const seen: Quarantined[] = [];
    const trust = { keys, quarantined: (q: Quarantined) => { seen.push(q); } };
    const bad = sealRecord(keys, 's', 's.j.x', 1, Buffer.from([0xff, 0xff]));
    expect(readRecord(trust, 's', 's.j.x', 1, bad, 0, bad.length)).to.equal(null);
    const foreign = sealRecord(new ClusterKeys([B]), 's', 's.j.x', 2, Buffer.from([2, 0, 1, 120]));
    expect(readRecord(trust, 's', 's.j.x', 2, foreign, 0, foreign.length)).to.equal(null);
    expect(seen.map((q) => [q.seq, q.deletable])).to.deep.equal([[1, true], [2, false]]);
    expect(seen[0]!.why).to.match(/does not decode/);
  });

  it('runs a forwarded batch once, while fresh, for its tenure, and only its sender can read the answer as the leader\'s', () => {
    const keys = new ClusterKeys([A]);
    const nonces = new NonceBook();
    const now = 1_800_000_000_000;
    const L = 'n1/42/0a0b0c0d';
    const { body, nonce } = sealRequest(keys, 'c', L, Buffer.from('cmds'), now);
    // Addressed to another tenure (the next leader's, or none known): not run, not remembered, redirected.
    expect(openRequest(keys, 'c', 'n2/7/ffffffff', body, nonces, now + 500)).to.deep.equal({ misaddressed: L, nonce });
    const opened = openRequest(keys, 'c', L, body, nonces, now + 1000);
    expect('payload' in opened && opened.payload.toString()).to.equal('cmds');
    expect(openRequest(keys, 'c', L, body, nonces, now + 2000)).to.deep.equal({ refused: 'a batch run before (a copy)' });
    expect(openRequest(keys, 'c', 'n2/7/ffffffff', body, new NonceBook(), now + 2000)).to.have.property('misaddressed', L);
    // A lease key anyone wrote may name a holder too long for an address: sent as none, never a throw.
    const long = sealRequest(keys, 'c', 'h'.repeat(300), Buffer.from('x'), now).body;
    expect(openRequest(keys, 'c', L, long, nonces, now)).to.have.property('misaddressed', '');
    const unknown = sealRequest(keys, 'c', '', Buffer.from('x'), now).body;
    expect(openRequest(keys, 'c', L, unknown, nonces, now)).to.have.property('misaddressed', '');
    // The address is sealed: rewriting it breaks the seal.
    const moved = Buffer.from(body);
    moved[1 + 4 + 8 + 16 + 32 + 1] ^= 1;
    expect(openRequest(keys, 'c', L, moved, new NonceBook(), now)).to.deep.equal({ refused: 'a seal that does not verify' });
    expect(openRequest(keys, 'c', L, body.subarray(0, 1 + 4 + 8 + 16 + 32 + 3), new NonceBook(), now)).to.deep.equal({ refused: 'not a sealed batch' });
    expect(openRequest(keys, 'd', L, sealRequest(keys, 'c', L, Buffer.from('x'), now).body, nonces, now)).to.deep.equal({ refused: 'a seal that does not verify' });
    expect(openRequest(keys, 'c', L, sealRequest(keys, 'c', L, Buffer.from('x'), now - FRESH_MS - 1).body, nonces, now)).to.have.property('refused').that.matches(/from this node's clock/);
    expect(openRequest(new ClusterKeys([B]), 'c', L, sealRequest(keys, 'c', L, Buffer.from('x'), now).body, nonces, now)).to.deep.equal({ refused: 'a seal that does not verify' });
    expect(openRequest(keys, 'c', L, Buffer.from('random bytes, not a batch at all, and long enough to have every field'), nonces, now)).to.deep.equal({ refused: 'not a sealed batch' });
    const answer = sealAnswer(keys, 'c', nonce, Buffer.from('replies'));
    expect(openAnswer(keys, 'c', nonce, answer)!.toString()).to.equal('replies');
    expect(openAnswer(keys, 'c', Buffer.alloc(16), answer)).to.equal(null);
    expect(openAnswer(new ClusterKeys([B]), 'c', nonce, answer)).to.equal(null);
  });
});
