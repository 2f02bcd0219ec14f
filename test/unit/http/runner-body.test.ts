import { expect } from 'chai';
import { runnerToJson, type RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import { parseRunnerField, parseRunnerObject, parseRunnerString } from '../../../lib/http/runner-body.ts';

describe('http/runner-body', () => {
  describe('object form', () => {
    it('parses the four HTTP kinds', () => {
      expect(parseRunnerObject({ type: 'shell', command: 'echo hi' })).to.deep.equal({ type: 'shell', command: 'echo hi' });
      expect(parseRunnerObject({ type: 'direct', executable: '/bin/echo', args: ['a', 'b c'] })).to.deep.equal({ type: 'direct', executable: '/bin/echo', args: ['a', 'b c'] });
      expect(parseRunnerObject({ type: 'http', method: 'POST', url: 'http://x/y' })).to.deep.equal({ type: 'http', method: 'POST', url: 'http://x/y' });
      expect(parseRunnerObject({ type: 'awf', workflow: 'wf', inputs: ['k=v'] })).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: ['k=v'] });
    });

    it('defaults absent args and inputs to empty lists', () => {
      expect(parseRunnerObject({ type: 'direct', executable: '/bin/true' })).to.deep.equal({ type: 'direct', executable: '/bin/true', args: [] });
      expect(parseRunnerObject({ type: 'awf', workflow: 'wf' })).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: [] });
    });

    it('names the missing or mistyped field', () => {
      expect(parseRunnerObject({ type: 'shell' })).to.equal('runner.command is required');
      expect(parseRunnerObject({ type: 'shell', command: 3 })).to.equal('runner.command must be a string');
      expect(parseRunnerObject({ type: 'direct', executable: 'x', args: ['a', 1] })).to.equal('runner.args[1] must be a string');
      expect(parseRunnerObject({ type: 'direct', executable: 'x', args: 'a' })).to.equal('runner.args must be an array of strings');
      expect(parseRunnerObject({ type: 'http', method: 'PATCH', url: 'http://x' })).to.match(/^runner.method must be one of GET, POST, PUT, DELETE/);
      expect(parseRunnerObject({ type: 'http', method: 'GET' })).to.equal('runner.url is required');
      expect(parseRunnerObject({ type: 'awf', workflow: 'w', inputs: [null] })).to.equal('runner.inputs[0] must be a string');
      expect(parseRunnerObject({})).to.equal('runner.type must be a string');
      expect(parseRunnerObject({ type: 'ftp' })).to.match(/^runner.type must be one of shell, direct, http, awf/);
    });

    it('refuses amqp and redis (TCP only)', () => {
      expect(parseRunnerObject({ type: 'amqp', dsn: 'amqp://h', exchange: 'e', routing_key: 'k' })).to.match(/amqp.*only.*TCP/);
      expect(parseRunnerObject({ type: 'redis', url: 'redis://h', command: 'SET', key: 'k' })).to.match(/redis.*only.*TCP/);
    });
  });

  describe('string form', () => {
    it('maps each kind\'s args', () => {
      expect(parseRunnerString('http', ['GET', 'https://x/'])).to.deep.equal({ type: 'http', method: 'GET', url: 'https://x/' });
      expect(parseRunnerString('awf', ['wf', '--input', 'a=1', '--input', 'b=2'])).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: ['a=1', 'b=2'] });
      expect(parseRunnerString('awf', ['wf'])).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: [] });
      expect(parseRunnerString('shell', ['echo "a b"'])).to.deep.equal({ type: 'shell', command: 'echo "a b"' });
      expect(parseRunnerString('direct', ['/bin/echo', 'x', 'y'])).to.deep.equal({ type: 'direct', executable: '/bin/echo', args: ['x', 'y'] });
      expect(parseRunnerString('direct', ['/bin/true'])).to.deep.equal({ type: 'direct', executable: '/bin/true', args: [] });
    });

    it('rejects wrong arities and malformed awf inputs, naming args', () => {
      expect(parseRunnerString('http', ['GET'])).to.match(/^args must be \[method, url\]/);
      expect(parseRunnerString('http', ['get', 'http://x'])).to.match(/^args\[0\] must be one of/);
      expect(parseRunnerString('shell', ['a', 'b'])).to.match(/^args must be \[command\]/);
      expect(parseRunnerString('shell', [])).to.match(/^args must be \[command\]/);
      expect(parseRunnerString('direct', [])).to.match(/^args must be \[executable/);
      expect(parseRunnerString('awf', [])).to.match(/^args must be \[workflow/);
      expect(parseRunnerString('awf', ['wf', '--inputs', 'a=1'])).to.equal('args[1] must be "--input"');
      expect(parseRunnerString('awf', ['wf', '--input'])).to.match(/^args\[2\] is missing/);
      expect(parseRunnerString('http', undefined)).to.equal('args is required when runner is a string');
      expect(parseRunnerString('http', ['GET', 5])).to.equal('args[1] must be a string');
      expect(parseRunnerString('redis', ['redis://h', 'SET', 'k'])).to.match(/only.*TCP/);
      expect(parseRunnerString('nope', [])).to.match(/^runner must be one of/);
    });
  });

  describe('parseRunnerField', () => {
    it('dispatches on the runner\'s JSON type', () => {
      expect(parseRunnerField({ runner: 'shell', args: ['true'] })).to.deep.equal({ type: 'shell', command: 'true' });
      expect(parseRunnerField({ runner: { type: 'shell', command: 'true' } })).to.deep.equal({ type: 'shell', command: 'true' });
    });

    it('rejects a missing runner, another JSON type, and args beside an object runner', () => {
      expect(parseRunnerField({})).to.equal('runner is required');
      expect(parseRunnerField({ runner: ['shell'] })).to.equal('runner must be an object or a string');
      expect(parseRunnerField({ runner: null })).to.equal('runner must be an object or a string');
      expect(parseRunnerField({ runner: { type: 'shell', command: 'x' }, args: [] })).to.match(/^args is only allowed when runner is a string/);
    });
  });

  describe('runnerToJson', () => {
    it('writes the object form of all six kinds with type first', () => {
      const specs: RunnerSpec[] = [
        { type: 'shell', command: 'c' },
        { type: 'direct', executable: 'e', args: ['a'] },
        { type: 'http', method: 'PUT', url: 'http://u' },
        { type: 'awf', workflow: 'w', inputs: ['k=v'] },
        { type: 'amqp', dsn: 'amqp://h', exchange: 'x', routing_key: 'r' },
        { type: 'redis', url: 'redis://h', command: 'RPUSH', key: 'k' },
      ];
      for (const spec of specs) {
        const json = runnerToJson(spec) as Record<string, unknown>;
        expect(json).to.deep.equal(spec);
        expect(Object.keys(json)[0]).to.equal('type');
      }
    });

    it('round-trips the object form of the HTTP kinds', () => {
      const spec: RunnerSpec = { type: 'direct', executable: '/bin/echo', args: ['x'] };
      expect(parseRunnerObject(runnerToJson(spec) as Record<string, unknown>)).to.deep.equal(spec);
    });
  });
});
