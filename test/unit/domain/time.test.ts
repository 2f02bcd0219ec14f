// Timestamp parsing and formatting: every accepted form, every rejection, the exact i64 bounds.
import { expect } from 'chai';
import {
  I64_MAX, I64_MIN, formatIso, parseIsoTimestamp, parseTcpTimestamp, parseTimestampToken,
} from '../../../lib/domain/time.ts';

const S = 1_000_000_000n;
const T2026 = 1775822400n * S; // 2026-04-10T12:00:00Z

function expectError(r: bigint | string, re?: RegExp): void {
  expect(r, 'expected an error message').to.be.a('string');
  if (re) expect(r).to.match(re);
}

describe('domain/time', () => {
  describe('parseTimestampToken: integer nanoseconds', () => {
    it('accepts plain, zero, negative and leading-zero integers', () => {
      expect(parseTimestampToken('1775822400123456789')).to.equal(1775822400123456789n);
      expect(parseTimestampToken('0')).to.equal(0n);
      expect(parseTimestampToken('-0')).to.equal(0n);
      expect(parseTimestampToken('-1')).to.equal(-1n);
      expect(parseTimestampToken('007')).to.equal(7n);
    });

    it('accepts exactly the i64 bounds and rejects one beyond', () => {
      expect(parseTimestampToken('9223372036854775807')).to.equal(I64_MAX);
      expect(parseTimestampToken('-9223372036854775808')).to.equal(I64_MIN);
      expectError(parseTimestampToken('9223372036854775808'), /out of range/);
      expectError(parseTimestampToken('-9223372036854775809'), /out of range/);
      expectError(parseTimestampToken('99999999999999999999'), /out of range/);
      expectError(parseTimestampToken('9'.repeat(4000)), /out of range/);
    });

    it('rejects signs, decimals, exponents, hex, spaces and garbage', () => {
      for (const s of ['+5', '-', '1.5', '1e9', '0x10', ' 1', '1 ', '', 'soon', '12abc', '١٢']) {
        expectError(parseTimestampToken(s), /not a valid timestamp/);
      }
    });
  });

  describe('parseTimestampToken: datetimes', () => {
    it('reads "YYYY-MM-DD HH:MM:SS" (one quoted token) as UTC', () => {
      expect(parseTimestampToken('2026-04-10 12:00:00')).to.equal(T2026);
      expect(parseTimestampToken('1970-01-01 00:00:00')).to.equal(0n);
      expect(parseTimestampToken('2030-01-02 03:04:05')).to.equal(1893553445n * S);
    });

    it('reads ISO 8601 / RFC 3339 with Z, lowercase t/z, and a space separator with a zone', () => {
      expect(parseTimestampToken('2026-04-10T12:00:00Z')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-10t12:00:00z')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-10 12:00:00Z')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-10 14:00:00+02:00')).to.equal(T2026);
    });

    it('honours offsets in both directions, across a day boundary', () => {
      expect(parseTimestampToken('2026-04-10T14:00:00+02:00')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-10T06:30:00-05:30')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-11T01:00:00+13:00')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-10T12:00:00+00:00')).to.equal(T2026);
      expect(parseTimestampToken('2026-04-10T12:00:00-00:00')).to.equal(T2026);
      expect(parseTimestampToken('2030-01-02T05:04:05.000000001+02:00')).to.equal(1893553445000000001n);
    });

    it('reads fractions of 1 to 9 digits exactly and rejects 10', () => {
      const cases: Array<[string, bigint]> = [
        ['1', 100_000_000n], ['12', 120_000_000n], ['123', 123_000_000n], ['1234', 123_400_000n],
        ['12345', 123_450_000n], ['123456', 123_456_000n], ['1234567', 123_456_700n],
        ['12345678', 123_456_780n], ['123456789', 123_456_789n], ['000000001', 1n],
      ];
      for (const [frac, ns] of cases) {
        expect(parseTimestampToken(`2026-04-10T12:00:00.${frac}Z`), frac).to.equal(T2026 + ns);
      }
      expectError(parseTimestampToken('2026-04-10T12:00:00.1234567890Z'), /more than 9 digits/);
      expectError(parseTimestampToken('2026-04-10T12:00:00.Z'), /not a valid timestamp/);
    });

    it('rejects an ISO datetime without a zone', () => {
      expectError(parseTimestampToken('2026-04-10T12:00:00'), /needs a zone/);
      expectError(parseTimestampToken('2026-04-10T12:00:00.5'), /needs a zone/);
    });

    it('rejects impossible dates and times', () => {
      expectError(parseTimestampToken('2026-02-31 00:00:00'), /day 31 out of range for 2026-02/);
      expectError(parseTimestampToken('2026-02-29T00:00:00Z'), /day 29/);
      expectError(parseTimestampToken('2100-02-29T00:00:00Z'), /day 29/);
      expectError(parseTimestampToken('2026-04-31T00:00:00Z'), /day 31/);
      expectError(parseTimestampToken('2026-04-00T00:00:00Z'), /day 00/);
      expectError(parseTimestampToken('2026-13-01T00:00:00Z'), /month 13/);
      expectError(parseTimestampToken('2026-00-01T00:00:00Z'), /month 00/);
      expectError(parseTimestampToken('2026-04-10T24:00:00Z'), /hour 24/);
      expectError(parseTimestampToken('2026-04-10T12:60:00Z'), /minute 60/);
      expectError(parseTimestampToken('2026-04-10T12:00:60Z'), /second 60/);
      expectError(parseTimestampToken('2026-04-10T12:00:00+24:00'), /offset/);
      expectError(parseTimestampToken('2026-04-10T12:00:00+01:60'), /offset/);
    });

    it('accepts leap days where they exist', () => {
      expect(parseTimestampToken('2024-02-29T00:00:00Z')).to.equal(1709164800n * S);
      expect(parseTimestampToken('2000-02-29T00:00:00Z')).to.equal(951782400n * S);
    });

    it('rejects malformed shapes', () => {
      for (const s of [
        '2026-4-10T12:00:00Z', '2026-04-10T12:00Z', '20260410T120000Z', '2026-04-10T12:00:00+0200',
        '2026-04-10T12:00:00+02', '2026-04-10X12:00:00Z', '2026-04-10T12:00:00 Z', '+2026-04-10T12:00:00Z',
        '2026-04-10T12:00:00ZZ', '2026-W15-5T12:00:00Z', '2026-04-10  12:00:00',
      ]) {
        expectError(parseTimestampToken(s));
      }
    });

    it('rejects a date alone with a hint', () => {
      expectError(parseTimestampToken('2026-04-10'), /date without a time/);
    });

    it('keeps the exact i64 datetime bounds and rejects year 2263 and early 1677', () => {
      expect(parseTimestampToken('2262-04-11T23:47:16.854775807Z')).to.equal(I64_MAX);
      expect(parseTimestampToken('1677-09-21T00:12:43.145224192Z')).to.equal(I64_MIN);
      expectError(parseTimestampToken('2262-04-11T23:47:16.854775808Z'), /out of range/);
      expectError(parseTimestampToken('1677-09-21T00:12:43.145224191Z'), /out of range/);
      expectError(parseTimestampToken('2263-01-01T00:00:00Z'), /out of range/);
      expectError(parseTimestampToken('9999-12-31T23:59:59Z'), /out of range/);
      expectError(parseTimestampToken('0000-01-01T00:00:00Z'), /out of range/);
      // An offset can bring a local time past the bound back inside it.
      expect(parseTimestampToken('2262-04-12T01:47:16.854775807+02:00')).to.equal(I64_MAX);
    });

    it('reads pre-1970 datetimes', () => {
      expect(parseTimestampToken('1969-12-31T23:59:59.999999999Z')).to.equal(-1n);
      expect(parseTimestampToken('1900-01-01 00:00:00')).to.equal(-2208988800n * S);
    });
  });

  describe('parseTcpTimestamp', () => {
    it('takes one token', () => {
      expect(parseTcpTimestamp(['42'])).to.deep.equal({ ns: 42n });
      expect(parseTcpTimestamp(['2026-04-10 12:00:00'])).to.deep.equal({ ns: T2026 });
      expect(parseTcpTimestamp(['2026-04-10T12:00:00Z'])).to.deep.equal({ ns: T2026 });
    });

    it('takes the two-token datetime as UTC', () => {
      expect(parseTcpTimestamp(['2026-04-10', '12:00:00'])).to.deep.equal({ ns: T2026 });
      expect(parseTcpTimestamp(['2030-01-02', '03:04:05'])).to.deep.equal({ ns: 1893553445n * S });
    });

    it('reports errors of the two-token form', () => {
      expect(parseTcpTimestamp(['2026-02-31', '00:00:00'])).to.deep.equal({ error: 'day 31 out of range for 2026-02' });
      expect(parseTcpTimestamp(['2026-04-10', 'noon'])).to.have.property('error').that.match(/not a valid/);
      expect(parseTcpTimestamp(['2026-04-10', '25:00:00'])).to.have.property('error').that.match(/hour 25/);
    });

    it('rejects a missing timestamp and tokens beyond the form', () => {
      expect(parseTcpTimestamp([])).to.deep.equal({ error: 'missing timestamp' });
      expect(parseTcpTimestamp(['1', '2'])).to.have.property('error').that.match(/too many/);
      expect(parseTcpTimestamp(['1', '2', '3'])).to.have.property('error').that.match(/too many/);
      expect(parseTcpTimestamp(['2026-04-10', '12:00:00', 'x'])).to.have.property('error').that.match(/too many/);
      expect(parseTcpTimestamp(['2026-04-10T12:00:00Z', '12:00:00'])).to.have.property('error').that.match(/too many/);
    });

    it('never turns garbage into epoch 0', () => {
      for (const t of [['soon'], [''], ['0x0'], ['1970-01-01', ''], ['nope', 'nope']]) {
        expect(parseTcpTimestamp(t), JSON.stringify(t)).to.have.property('error');
      }
    });
  });

  describe('parseIsoTimestamp (HTTP)', () => {
    it('accepts ISO 8601 with a zone, offsets honoured', () => {
      expect(parseIsoTimestamp('2026-04-10T12:00:00Z')).to.equal(T2026);
      expect(parseIsoTimestamp('2026-04-10T12:00:00.123456789+02:00')).to.equal(T2026 - 7200n * S + 123456789n);
      expect(parseIsoTimestamp('2026-04-10 12:00:00Z')).to.equal(T2026);
    });

    it('requires a zone and rejects integers and the zoneless spec form', () => {
      expectError(parseIsoTimestamp('2026-04-10T12:00:00'), /zone/);
      expectError(parseIsoTimestamp('2026-04-10 12:00:00'), /zone/);
      expectError(parseIsoTimestamp('1775822400000000000'));
      expectError(parseIsoTimestamp(''));
      expectError(parseIsoTimestamp(42 as unknown as string));
    });
  });

  describe('formatIso', () => {
    it('formats UTC with a trimmed fraction, or none', () => {
      expect(formatIso(0n)).to.equal('1970-01-01T00:00:00Z');
      expect(formatIso(T2026)).to.equal('2026-04-10T12:00:00Z');
      expect(formatIso(T2026 + 123_000_000n)).to.equal('2026-04-10T12:00:00.123Z');
      expect(formatIso(T2026 + 1n)).to.equal('2026-04-10T12:00:00.000000001Z');
    });

    it('formats pre-1970 and the i64 bounds', () => {
      expect(formatIso(-1n)).to.equal('1969-12-31T23:59:59.999999999Z');
      expect(formatIso(-S)).to.equal('1969-12-31T23:59:59Z');
      expect(formatIso(I64_MAX)).to.equal('2262-04-11T23:47:16.854775807Z');
      expect(formatIso(I64_MIN)).to.equal('1677-09-21T00:12:43.145224192Z');
    });

    it('round-trips through parseIsoTimestamp for many values', () => {
      // Deterministic pseudo-random values over the whole i64 range plus edge cases.
      let x = 0x2545f4914f6cdd1dn;
      const values = [I64_MIN, I64_MAX, 0n, -1n, 1n, 951782400n * S, 1709164800n * S - 1n];
      for (let i = 0; i < 2000; i++) {
        x ^= (x << 13n) & 0xffffffffffffffffn;
        x ^= x >> 7n;
        x ^= (x << 17n) & 0xffffffffffffffffn;
        values.push(BigInt.asIntN(64, x));
      }
      for (const v of values) expect(parseIsoTimestamp(formatIso(v)), String(v)).to.equal(v);
    });

    it('agrees with Date at millisecond precision', () => {
      for (const ms of [0, 86_399_999, 951_782_400_000, -2_208_988_800_000, 4_102_444_800_000, -1]) {
        expect(formatIso(BigInt(ms) * 1_000_000n)).to.equal(new Date(ms).toISOString().replace(/\.?0*Z$/, 'Z'));
      }
    });
  });
});
