// The client's time helpers (lib/client/time.ts: bigint nanoseconds to and from Date and ISO
// 8601, exact to the nanosecond) and its options (lib/client/options.ts).
import { expect } from 'chai';
import { dateFromNs, isoFromNs, nsFromDate, nsFromIso, toNs } from '../../../lib/client/time.ts';
import { parseEndpoint, readOptions } from '../../../lib/client/options.ts';

describe('client time helpers and options', () => {
  it('ISO text and nanoseconds, both ways, exactly', () => {
    expect(nsFromIso('2026-04-10T14:00:00.123456789+02:00')).to.equal(1775822400123456789n);
    expect(isoFromNs(1775822400123456789n)).to.equal('2026-04-10T12:00:00.123456789Z');
    expect(isoFromNs(-1n)).to.equal('1969-12-31T23:59:59.999999999Z');
    expect(() => nsFromIso('2026-04-10T12:00:00')).to.throw(RangeError, /with a zone/);
  });

  it('Date and nanoseconds: a Date holds milliseconds, rounded toward the past', () => {
    expect(nsFromDate(new Date(1500))).to.equal(1_500_000_000n);
    expect(dateFromNs(1_500_999_999n).getTime()).to.equal(1500);
    expect(dateFromNs(-1n).getTime()).to.equal(-1);
    expect(() => nsFromDate(new Date(NaN))).to.throw(RangeError);
    expect(toNs(5n)).to.equal(5n);
    expect(toNs('1970-01-01T00:00:01Z')).to.equal(1_000_000_000n);
    expect(() => toNs(5 as never)).to.throw(TypeError, /bigint/);
  });

  it('addresses and options, with their defaults; bad ones named', () => {
    expect(parseEndpoint('[::1]:99')).to.deep.equal({ host: '::1', port: 99, text: '[::1]:99' });
    expect(parseEndpoint('h')).to.deep.equal({ host: 'h', port: 5678, text: 'h' });
    expect(parseEndpoint('h:0')).to.match(/port must be 1 to 65535/);
    const s = readOptions({ addresses: 'a:1, b:2' });
    expect(s.endpoints.map((e) => e.text)).to.deep.equal(['a:1', 'b:2']);
    expect(s).to.include({ timeoutMs: 10_000, maxInflight: 4096, tls: null, token: null });
    expect(s.retryStrategy(3)).to.equal(300);
    expect(readOptions({ tls: true }).tls).to.deep.equal({});
    expect(() => readOptions({ addresses: [] })).to.throw(TypeError, /no address/);
    expect(() => readOptions({ token: 'a\nb' })).to.throw(TypeError, /token/);
    expect(() => readOptions({ timeout: -1 })).to.throw(TypeError, /timeout/);
  });
});
