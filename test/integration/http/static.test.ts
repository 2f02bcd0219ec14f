// lib/http/static.ts on a bare polka app over loopback, for what the daemon tests cannot set
// up: swagger-ui-dist missing (/docs answers 503, /ui still works) and a console file removed
// after startup (that response is cut off; the process and later requests are unharmed).
import { expect } from 'chai';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import polka, { type Request } from 'polka';
import { silentLogger } from '../../../lib/log.ts';
import { mountStatic, type StaticSources } from '../../../lib/http/static.ts';
import { tempDir } from '../../helpers/tmp.ts';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

function get(server: Server, path: string): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('aborted')));
    });
    req.on('error', reject);
    req.end();
  });
}

async function serve(sources: StaticSources): Promise<Server> {
  const app = polka();
  mountStatic(app, silentLogger(), sources);
  const server = createServer((req, res) => (app.handler as (q: Request, s: typeof res) => void)(req as Request, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('http/static', () => {
  let server: Server | null = null;
  afterEach(() => new Promise<void>((resolve) => {
    if (server === null) return resolve();
    server.close(() => resolve());
    server.closeAllConnections(); // a hung response must not hang the suite
    server = null;
  }));

  it('without swagger-ui-dist, /docs/ is 503 naming the reason and /ui/ still serves', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'index.html'), '<!DOCTYPE html><title>t</title>');
    server = await serve({ consoleDir: dir, dist: 'swagger-ui-dist is not installed (test)' });
    const docs = await get(server, '/docs/');
    expect(docs.status).to.equal(503);
    expect(JSON.parse(docs.text)).to.deep.equal({ error: 'API reference unavailable: swagger-ui-dist is not installed (test)' });
    const ui = await get(server, '/ui/');
    expect(ui.status).to.equal(200);
    expect(ui.text).to.equal('<!DOCTYPE html><title>t</title>');
  });

  it('a file removed after startup cuts that response off; the server keeps serving', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'index.html'), '<!DOCTYPE html><title>t</title>');
    writeFileSync(join(dir, 'gone.js'), 'export {};\n');
    server = await serve({ consoleDir: dir, dist: 'not needed here' });
    rmSync(join(dir, 'gone.js'));
    const failed = await get(server, '/ui/gone.js').then(() => null, (err: Error) => err);
    expect(failed, 'the response must not complete').to.be.instanceOf(Error);
    expect((await get(server, '/ui/')).status).to.equal(200);
  });
});
