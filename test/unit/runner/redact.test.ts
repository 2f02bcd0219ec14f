import { expect } from 'chai';
import { redactUrl, scrubSecrets } from '../../../lib/runner/redact.ts';

describe('runner/redact', () => {
  it('hides userinfo, keeps host, port and path', () => {
    expect(redactUrl('redis://user:pw@host:6379/3')).to.equal('redis://***@host:6379/3');
    expect(redactUrl('redis://:pw@host')).to.equal('redis://***@host');
    expect(redactUrl('amqp://user@10.0.0.1:5672/%2F')).to.equal('amqp://***@10.0.0.1:5672/%2F');
    expect(redactUrl('amqp://host/vh')).to.equal('amqp://host/vh');
    expect(redactUrl('https://u:p@example.com/hook?token=abc')).to.equal('https://***@example.com/hook');
  });

  it('never echoes an unparsable URL', () => {
    expect(redactUrl('redis://user:secret@ho st')).to.equal('<unparsable URL>');
    expect(redactUrl('')).to.equal('<unparsable URL>');
  });

  it('scrubs secrets out of free text', () => {
    expect(scrubSecrets('auth failed for pw123 (pw123)', ['pw123', undefined, ''])).to.equal('auth failed for *** (***)');
  });
});
