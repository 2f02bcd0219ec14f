import { expect } from 'chai';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { checkMediaType, exactIntegers, MAX_BODY_BYTES, parseJsonBytes, readJsonBody } from '../../../lib/http/body.ts';

function request(headers: Record<string, string>, chunks: Buffer[]): IncomingMessage {
  const stream = Readable.from(chunks, { objectMode: false }) as unknown as IncomingMessage;
  (stream as { headers: Record<string, string> }).headers = headers;
  return stream;
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('http/body', () => {
  describe('checkMediaType', () => {
    it('accepts application/json with or without a utf-8 charset, any case', () => {
      for (const h of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=utf8']) {
        expect(checkMediaType(h), h).to.equal(null);
      }
    });

    it('rejects a missing or other media type, and other charsets', () => {
      for (const h of [undefined, '', 'text/plain', 'application/jsonx', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        expect(checkMediaType(h), String(h)).to.match(/Content-Type must be application\/json/);
      }
      expect(checkMediaType('application/json; charset=latin1')).to.match(/charset must be utf-8/);
    });
  });

  describe('parseJsonBytes', () => {
    it('parses an object', () => {
      expect(parseJsonBytes(Buffer.from('{"a":1}'))).to.deep.equal({ ok: true, value: { a: 1 } });
    });

    it('rejects malformed JSON, an empty body and invalid UTF-8 with 400', () => {
      for (const raw of [Buffer.from('{'), Buffer.from(''), Buffer.from('  \n'), Buffer.from([0x7b, 0xff, 0x7d]), Buffer.from('{"a":1}x')]) {
        const r = parseJsonBytes(raw);
        expect(r.ok, raw.toString('hex')).to.equal(false);
        if (!r.ok) expect(r.status).to.equal(400);
      }
    });
  });

  describe('exactIntegers', () => {
    it('refuses a key given twice in any object of the body, naming it, as TCP refuses an option given twice', () => {
      const refused = (text: string): string | null => {
        const r = parseJsonBytes(Buffer.from(text));
        return r.ok ? null : `${r.status} ${r.message}`;
      };
      expect(refused('{"every":"1s","every":"5m"}')).to.equal('400 every: given twice');
      expect(refused('{"retry":{"attempts":2,"delay":"1s","attempts":3}}')).to.equal('400 attempts: given twice');
      expect(refused('[{"a":1},{"b":2,"b":3}]')).to.equal('400 b: given twice');
      expect(refused('{"a":1,"\\u0061":2}')).to.equal('400 a: given twice'); // the same name, escaped
      expect(refused(`{"${'k'.repeat(100)}":1,"${'k'.repeat(100)}":2}`)).to.equal(`400 ${'k'.repeat(64)}...: given twice`);
      // The same key in different objects, keys inside strings, brackets inside strings, empty objects: all fine.
      for (const ok of ['{"a":{"a":1},"b":{"a":2}}', '{"a":"\\"a\\":1,\\"a\\":2","b":"{[,"}', '{"a":{},"b":[{},{}],"c":[1,{"a":1}]}', '{"x\\"":1,"x":2}', '[1,"a","a"]']) {
        expect(refused(ok), ok).to.equal(null);
      }
    });

    it('keeps integer literals beyond 2^53 exact, as bigints, at any depth; leaves every other value as JSON.parse makes it', () => {
      const text = '{"a":1893484800123456789,"b":[-9007199254740993,9007199254740991,1.5,1e300,"7"],"c":{"d":18446744073709551616}}';
      expect(parseJsonBytes(Buffer.from(text), exactIntegers)).to.deep.equal({
        ok: true, value: { a: 1893484800123456789n, b: [-9007199254740993n, 9007199254740991, 1.5, 1e300, '7'], c: { d: 18446744073709551616n } },
      });
      // Without it the same digits are a rounded double.
      const plain = parseJsonBytes(Buffer.from(text));
      expect(plain.ok && (plain.value as { a: unknown }).a).to.equal(1893484800123456800);
    });

    it('is applied by readJsonBody when given', async () => {
      const r = await readJsonBody(request(JSON_TYPE, [Buffer.from('{"start":1893484800123456789}')]), MAX_BODY_BYTES, exactIntegers);
      expect(r).to.deep.equal({ ok: true, value: { start: 1893484800123456789n } });
    });
  });

  describe('readJsonBody', () => {
    it('reads a body delivered in pieces', async () => {
      const r = await readJsonBody(request(JSON_TYPE, [Buffer.from('{"execu'), Buffer.from('tion":"x"}')]));
      expect(r).to.deep.equal({ ok: true, value: { execution: 'x' } });
    });

    it('is 415 before reading anything when the media type is wrong', async () => {
      const r = await readJsonBody(request({ 'content-type': 'text/plain' }, [Buffer.from('{}')]));
      expect(r).to.include({ ok: false, status: 415 });
    });

    it('is 413 from a declared Content-Length above the limit', async () => {
      const r = await readJsonBody(request({ ...JSON_TYPE, 'content-length': String(MAX_BODY_BYTES + 1) }, []));
      expect(r).to.include({ ok: false, status: 413 });
    });

    it('is 413 when a body without a length grows past the limit, and accepts exactly the limit', async () => {
      const over = await readJsonBody(request(JSON_TYPE, [Buffer.alloc(MAX_BODY_BYTES, 0x20), Buffer.from(' ')]));
      expect(over).to.include({ ok: false, status: 413 });
      const exact = Buffer.alloc(MAX_BODY_BYTES, 0x20);
      exact.write('{}', 0);
      expect(await readJsonBody(request(JSON_TYPE, [exact]))).to.deep.equal({ ok: true, value: {} });
    });

    it('honours a smaller limit', async () => {
      const r = await readJsonBody(request(JSON_TYPE, [Buffer.from('{"a":"123456"}')]), 8);
      expect(r).to.include({ ok: false, status: 413 });
    });
  });
});
