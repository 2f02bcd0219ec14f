// Identifier / pattern character set and length
// (tickd-protocol(7) "Identifiers and patterns"), namespace membership
// (tickd-protocol(7) AUTHENTICATION).
import { expect } from 'chai';
import { describeChar, inNamespace, validateIdentifier, validatePattern } from '../../../lib/domain/identifier.ts';

describe('domain/identifier', () => {
  describe('validateIdentifier', () => {
    it('accepts letters, digits and . - _ : up to 1024 bytes', () => {
      for (const s of ['a', 'Z', '0', 'job.1', 'a-b_c:d.E', '...', '-', ':', 'x'.repeat(1024)]) {
        expect(validateIdentifier('job', s), s.slice(0, 20)).to.equal(null);
        expect(validateIdentifier('rule', s), s.slice(0, 20)).to.equal(null);
      }
    });

    it('rejects the empty identifier, naming the kind', () => {
      expect(validateIdentifier('job', '')).to.equal('job identifier must not be empty');
      expect(validateIdentifier('rule', '')).to.equal('rule identifier must not be empty');
    });

    it('rejects 1025 bytes', () => {
      expect(validateIdentifier('job', 'x'.repeat(1025))).to.equal('job identifier too long (max 1024 bytes)');
    });

    it('rejects every other character and names it', () => {
      expect(validateIdentifier('job', 'bad/id')).to.equal(
        "job identifier contains invalid character '/' (allowed: letters, digits, . - _ :)");
      expect(validateIdentifier('rule', 'a b')).to.match(/^rule identifier contains invalid character space/);
      expect(validateIdentifier('job', 'tab\there')).to.match(/U\+0009/);
      expect(validateIdentifier('job', 'cr\r')).to.match(/U\+000D/);
      expect(validateIdentifier('job', 'é')).to.match(/U\+00E9/);
      expect(validateIdentifier('job', 'x😀')).to.match(/U\+1F600/);
      expect(validateIdentifier('job', 'lone\ud800')).to.match(/U\+D800/);
      for (const ch of ['"', "'", '\\', '*', '?', '#', '%', '+', ',', ';', '=', '@', '[', '~', '\0']) {
        expect(validateIdentifier('job', `a${ch}b`), JSON.stringify(ch)).to.be.a('string');
      }
    });

    it('rejects a non-string (HTTP JSON) without throwing', () => {
      expect(validateIdentifier('job', 5 as unknown as string)).to.equal('job identifier must be a string');
    });
  });

  describe('validatePattern', () => {
    it('accepts the empty pattern and valid ones', () => {
      expect(validatePattern('')).to.equal(null);
      expect(validatePattern('jobs.')).to.equal(null);
      expect(validatePattern('p'.repeat(1024))).to.equal(null);
    });

    it('rejects long patterns and bad characters, naming the pattern', () => {
      expect(validatePattern('p'.repeat(1025))).to.equal('pattern too long (max 1024 bytes)');
      expect(validatePattern('jobs.*')).to.match(/^pattern contains invalid character '\*'/);
    });
  });

  describe('describeChar', () => {
    it('shows printable ASCII quoted, space by name, the rest as code points', () => {
      expect(describeChar('/')).to.equal("'/'");
      expect(describeChar(' ')).to.equal('space');
      expect(describeChar('\x7f')).to.equal('U+007F');
      expect(describeChar('\n')).to.equal('U+000A');
    });
  });

  describe('inNamespace', () => {
    it('* contains everything', () => {
      expect(inNamespace('anything', '*')).to.equal(true);
      expect(inNamespace('', '*')).to.equal(true);
    });

    it('otherwise is a prefix test', () => {
      expect(inNamespace('team.a.job', 'team.a.')).to.equal(true);
      expect(inNamespace('team.a.', 'team.a.')).to.equal(true);
      expect(inNamespace('team.a', 'team.a.')).to.equal(false);
      expect(inNamespace('team.ab', 'team.a.')).to.equal(false);
      expect(inNamespace('x.team.a.', 'team.a.')).to.equal(false);
      expect(inNamespace('', 'team.')).to.equal(false);
    });

    it('treats * literally only when it is the whole namespace', () => {
      expect(inNamespace('a.b', 'a*')).to.equal(false);
    });
  });
});
