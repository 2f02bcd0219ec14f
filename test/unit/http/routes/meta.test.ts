import { expect } from 'chai';
import { STAT_KEYS, type StatValues } from '../../../../lib/domain/stat.ts';
import { toJson } from '../../../../lib/http/json.ts';
import { statToJson } from '../../../../lib/http/routes/meta.ts';

const sample = (): Record<string, string | bigint> => {
  const s: Record<string, string | bigint> = {};
  for (const k of STAT_KEYS) s[k] = 0n;
  return { ...s, uptime_ns: 12345678901234567890n, persistence: 'memory', compression: 'idle', auth_enabled: '1', tls_enabled: '0', framerate: 512n };
};

describe('http/routes/meta statToJson', () => {
  it('keeps the STAT key order, exact integers, strings for persistence/compression, 0/1 numbers for the flags', () => {
    const text = toJson(statToJson(sample() as StatValues));
    expect(text).to.contain('"uptime_ns":12345678901234567890');
    expect(text).to.contain('"persistence":"memory","compression":"idle","auth_enabled":1,"tls_enabled":0,"framerate":512');
    expect(Object.keys(JSON.parse(text) as object)).to.deep.equal([...STAT_KEYS]);
  });

  it('refuses a non-integer where an integer belongs (a broken invariant, answered 500)', () => {
    expect(() => statToJson({ ...sample(), jobs_total: 'many' } as StatValues)).to.throw(/jobs_total/);
  });
});
