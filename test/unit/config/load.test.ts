import { expect } from 'chai';
import { parseConfig } from '../../../lib/config/load.ts';
import { StartupError } from '../../../lib/errors.ts';

function failure(text: string): StartupError {
  try {
    parseConfig(text, 'test.toml');
  } catch (err) {
    expect(err).to.be.instanceOf(StartupError);
    return err as StartupError;
  }
  throw new Error(`accepted: ${text}`);
}

describe('config/load', () => {
  it('gives every default for an empty file', () => {
    const c = parseConfig('', null);
    expect(c.log.level).to.equal('info');
    expect(c.controller.listen).to.deep.equal({ host: '127.0.0.1', port: 5678, text: '127.0.0.1:5678' });
    expect(c.controller.auth_file).to.equal(null);
    expect(c.controller.tls_cert).to.equal(null);
    expect(c.http.listen).to.equal(null);
    expect(c.shell).to.deep.equal({ path: '/bin/sh', args: ['-c'] });
    expect(c.database).to.deep.equal({ persistence: 'logfile', logfile_path: 'logfile', fsync_on_persist: true, framerate: 512, compression_interval: 3600, attempt_history: 10 });
    expect(c.telemetry).to.deep.equal({ enabled: false, endpoint: null, service_name: 'tickd', flush_interval_ms: 5000 });
    expect(c.cluster).to.deep.equal({ node_tags: [], placement_wait: 60 });
  });

  it('reads [cluster] node_tags and placement_wait, and refuses a tag that is not one', () => {
    const c = parseConfig('[cluster]\nnode_tags = ["db", "eu-west"]\nplacement_wait = 5\n', null);
    expect(c.cluster).to.deep.equal({ node_tags: ['db', 'eu-west'], placement_wait: 5 });
    expect(failure('[cluster]\nnode_tags = ["db", "no space"]\n').message).to.match(/^cluster\.node_tags a tag is 1 to 64 characters/);
    expect(failure('[cluster]\nnode_tags = ["db", "db"]\n').message).to.equal('cluster.node_tags "db" is given twice');
    expect(failure('[cluster]\nplacement_wait = 0\n').message).to.match(/placement_wait must be between 1 and 86400/);
  });

  it('reads every section and key', () => {
    const c = parseConfig(`
[log]
level = "debug"
[controller]
listen = "[::1]:5679"
auth_file = "tokens.toml"
tls_cert = "c.pem"
tls_key = "k.pem"
[http]
listen = "0.0.0.0:5680"
[shell]
path = "/bin/sh"
args = ["-e", "-c"]
[database]
persistence = "memory"
logfile_path = "/var/lib/tickd/log"
fsync_on_persist = false
framerate = 65535
compression_interval = 0
[telemetry]
enabled = true
endpoint = "http://127.0.0.1:4318"
service_name = "sched"
flush_interval_ms = 4294967295
`, 'x');
    expect(c.controller.listen).to.deep.include({ host: '::1', port: 5679 });
    expect(c.http.listen).to.deep.include({ host: '0.0.0.0', port: 5680 });
    expect(c.shell.args).to.deep.equal(['-e', '-c']);
    expect(c.database.framerate).to.equal(65535);
    expect(c.database.compression_interval).to.equal(0);
    expect(c.telemetry.flush_interval_ms).to.equal(4294967295);
  });

  const matrix: Array<[string, string, RegExp]> = [
    ['[log]\nlevel = "loud"', 'InvalidLogLevel', /log\.level/],
    ['[log]\nlevel = 3', 'InvalidLogLevel', /log\.level/],
    ['[database]\nframerate = 0', 'FramerateOutOfRange', /framerate/],
    ['[database]\nframerate = 70000', 'FramerateOutOfRange', /70000/],
    ['[database]\nframerate = -5', 'FramerateOutOfRange', /framerate/],
    ['[database]\nframerate = 1.5', 'InvalidValue', /database\.framerate/],
    ['[database]\nframerate = "fast"', 'InvalidValue', /database\.framerate/],
    ['[server]\nport = 1', 'UnknownSection', /\[server\]/],
    ['[controller]\nport = 1', 'UnknownKey', /controller\.port/],
    ['[http]\nlisten = "127.0.0.1:5680"\nroot = "/"', 'UnknownKey', /http\.root/],
    ['[database]\npersistence = "disk"', 'InvalidValue', /database\.persistence/],
    ['[database]\nfsync_on_persist = "yes"', 'InvalidValue', /fsync_on_persist/],
    ['[database]\ncompression_interval = -1', 'InvalidValue', /compression_interval/],
    ['[controller]\ntls_cert = "c.pem"', 'InvalidValue', /tls_key/],
    ['[controller]\ntls_key = "k.pem"', 'InvalidValue', /tls_cert/],
    ['[controller]\nlisten = "localhost:5678"', 'InvalidValue', /controller\.listen/],
    ['[controller]\nlisten = "::1:5678"', 'InvalidValue', /controller\.listen/],
    ['[controller]\nlisten = "127.0.0.1:99999"', 'InvalidValue', /port/],
    ['[controller]\nlisten = "127.0.0.1"', 'InvalidValue', /controller\.listen/],
    ['[http]\nlisten = 5680', 'InvalidValue', /http\.listen/],
    ['[telemetry]\nenabled = true', 'InvalidValue', /telemetry\.endpoint/],
    ['[telemetry]\nenabled = true\nendpoint = "collector:4318"', 'InvalidValue', /telemetry\.endpoint/],
    ['[telemetry]\nenabled = true\nendpoint = "ftp://x"', 'InvalidValue', /telemetry\.endpoint/],
    ['[telemetry]\nflush_interval_ms = 4294967296', 'InvalidValue', /flush_interval_ms/],
    ['[telemetry]\nflush_interval_ms = -1', 'InvalidValue', /flush_interval_ms/],
    ['[shell]\npath = "/nonexistent/sh"', 'InvalidValue', /shell\.path/],
    ['[shell]\npath = "sh"', 'InvalidValue', /shell\.path/],
    ['[shell]\nargs = "-c"', 'InvalidValue', /shell\.args/],
    ['[shell]\nargs = [1, 2]', 'InvalidValue', /shell\.args/],
    ['[log\nlevel = "info"', 'InvalidValue', /TOML/],
    ['log = "info"', 'InvalidValue', /log/],
  ];
  for (const [text, name, message] of matrix) {
    it(`rejects ${JSON.stringify(text)} with ${name}`, () => {
      const err = failure(text);
      expect(err.name).to.equal(name);
      expect(err.message).to.match(message);
      expect(err.line()).to.match(new RegExp(`^tickd: config: ${name}: `));
    });
  }
});
