import { expect } from 'chai';
import { newAttemptId } from '../../../lib/engine/attempt-id.ts';

describe('engine/attempt-id', () => {
  it('makes 128-bit attempt ids as 32 hex characters, unique', () => {
    const ids = new Set(Array.from({ length: 1000 }, newAttemptId));
    expect(ids.size).to.equal(1000);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{32}$/);
  });
});
