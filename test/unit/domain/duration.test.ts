import { expect } from 'chai';
import { formatDuration, parseDurationNs } from '../../../lib/domain/duration.ts';

describe('durations', () => {
  it('writes the shortest text that reads back the same', () => {
    for (const text of ['30s', '5m', '1h30m', '1d12h', '1s500ms', '0s', '366d', '1ms7us3ns']) expect(formatDuration(parseDurationNs(text)!)).to.equal(text);
    expect(formatDuration(parseDurationNs('90s')!)).to.equal('1m30s');
    expect(formatDuration(parseDurationNs('30m1h')!)).to.equal('1h30m');
  });
});
