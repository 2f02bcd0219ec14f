import { expect } from 'chai';
import { clipHead, clipTail, describeOutcome, MAX_OUTCOME_TEXT_BYTES, OUTCOME_KINDS, outcomeSucceeded, type AttemptOutcome } from '../../../lib/domain/attempt.ts';

describe('domain/attempt', () => {
  const cases: Array<[AttemptOutcome, boolean, string]> = [
    [{ kind: 'exit', status: 0, stderr: '' }, true, 'exit status 0'],
    [{ kind: 'exit', status: 3, stderr: 'boom\n' }, false, 'exit status 3'],
    [{ kind: 'signal', signal: 'SIGKILL', stderr: '' }, false, 'killed by signal SIGKILL'],
    [{ kind: 'spawn_error', error: 'spawn awf ENOENT' }, false, 'could not start: spawn awf ENOENT'],
    [{ kind: 'http_response', status: 204 }, true, 'HTTP status 204'],
    [{ kind: 'http_response', status: 302 }, false, 'HTTP status 302'],
    [{ kind: 'http_response', status: 503 }, false, 'HTTP status 503'],
    [{ kind: 'network_error', error: 'connect ECONNREFUSED 127.0.0.1:1' }, false, 'network error: connect ECONNREFUSED 127.0.0.1:1'],
    [{ kind: 'delivered' }, true, 'delivered'],
    [{ kind: 'broker_error', error: 'WRONGTYPE Operation against a key' }, false, 'broker error: WRONGTYPE Operation against a key'],
    [{ kind: 'runner_error', error: 'unknown runner kind' }, false, 'runner error: unknown runner kind'],
    [{ kind: 'no_rule' }, false, 'no matching rule'],
    [{ kind: 'no_node', on: ['db', 'eu'] }, false, 'no live node has the tags db, eu'],
    [{ kind: 'aborted' }, false, 'aborted at shutdown'],
  ];

  it('tells success from the outcome alone: exit 0, a 2xx status, a broker\'s acknowledgement', () => {
    for (const [o, ok] of cases) expect(outcomeSucceeded(o), JSON.stringify(o)).to.equal(ok);
  });

  it('describes every outcome kind in one line, in the runner\'s terms', () => {
    for (const [o, , text] of cases) expect(describeOutcome(o)).to.equal(text);
    expect(new Set(cases.map(([o]) => o.kind))).to.deep.equal(new Set(OUTCOME_KINDS));
  });

  it('clips the head of a message and the tail of output to 512 bytes at character boundaries', () => {
    expect(MAX_OUTCOME_TEXT_BYTES).to.equal(512);
    expect(clipHead('short')).to.equal('short');
    expect(clipHead('x'.repeat(600))).to.equal('x'.repeat(512));
    // 'é' is 2 bytes: 511 ASCII bytes and then one é would end at byte 513, so it is left out.
    expect(clipHead('a'.repeat(511) + 'é' + 'z')).to.equal('a'.repeat(511));
    const bytes = Buffer.from('é'.repeat(300), 'utf8'); // 600 bytes
    const tail = clipTail(bytes);
    expect(Buffer.byteLength(tail)).to.equal(512);
    expect(tail).to.equal('é'.repeat(256));
    const odd = Buffer.concat([bytes, Buffer.from('z')]); // 601 bytes: the cut at 512 from the end falls inside an é
    expect(clipTail(odd)).to.equal(`${'é'.repeat(255)}z`);
    expect(clipTail(Buffer.from('tail'), 2)).to.equal('il');
    expect(clipTail(new Uint8Array(0))).to.equal('');
  });
});
