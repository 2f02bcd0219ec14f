// The static pages over plain HTTP on the real daemon with a token file (lib/http/static.ts):
// /ui/ and /docs/ need no token, carry their caching headers (no-cache + ETag for our files,
// one year immutable for the versioned swagger-ui-dist files), answer 304 to a matching
// If-None-Match, redirect the bare mount, refuse other methods, 404 in JSON for anything
// else (no traversal, no petstore initializer), and nothing they are made of points at
// another origin.
import { expect } from 'chai';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';
import { CONSOLE_CSP, CONSOLE_DIR, DOCS_CSP, DOCS_SHELL_DIR, findSwaggerUiDist, IMMUTABLE, REVALIDATE, type SwaggerUiDist } from '../../lib/http/static.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"
`;

const TYPES: Record<string, string> = {
  '.html': 'text/html;charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const files = (dir: string): string[] => readdirSync(dir).sort();

describe('static console (/ui/) and API reference (/docs/)', function () {
  this.timeout(30_000);
  let daemon: Daemon;
  let anon: HttpApi;
  let dist: SwaggerUiDist;

  before(async () => {
    const found = findSwaggerUiDist();
    if (typeof found === 'string') throw new Error(found);
    dist = found;
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), TOKENS);
    daemon = await Daemon.start({ dir, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
    anon = new HttpApi(daemon.http!);
  });
  after(async () => {
    anon?.close();
    await daemon?.stop();
  });

  it('/ui/ is the console page, without a token, although the API needs one', async () => {
    expect((await anon.request('GET', '/jobs')).status).to.equal(401);
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
      const res = await anon.request('GET', '/ui/', { headers });
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('text/html;charset=utf-8');
      expect(res.text).to.equal(readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8'));
      expect(res.text).to.contain('<title>tickd console</title>').and.contain('<script type="module" src="app.js"></script>');
    }
  });

  it('serves every console file with its type, no-cache + ETag, the CSP and nosniff; a matching If-None-Match is 304', async () => {
    const names = files(CONSOLE_DIR);
    expect(names).to.include.members(['index.html', 'app.js', 'api.js', 'format.js', 'render.js', 'style.css', 'favicon.svg']);
    for (const name of names) {
      const res = await anon.request('GET', `/ui/${name}`);
      expect(res.status, name).to.equal(200);
      expect(res.text, name).to.equal(readFileSync(join(CONSOLE_DIR, name), 'utf8'));
      expect(res.headers['content-type'], name).to.equal(TYPES[extname(name)]);
      expect(res.headers['cache-control'], name).to.equal(REVALIDATE);
      expect(res.headers['etag'], name).to.match(/^W\/"\d+-\d+"$/);
      expect(res.headers['content-security-policy'], name).to.equal(CONSOLE_CSP);
      expect(res.headers['x-content-type-options'], name).to.equal('nosniff');
      const again = await anon.request('GET', `/ui/${name}`, { headers: { 'if-none-match': res.headers['etag']! } });
      expect(again.status, name).to.equal(304);
      expect(again.text, name).to.equal('');
      expect(again.headers['cache-control'], name).to.equal(REVALIDATE);
    }
    const stale = await anon.request('GET', '/ui/app.js', { headers: { 'if-none-match': 'W/"1-1"' } });
    expect(stale.status).to.equal(200);
  });

  it('/docs/ is our shell whose initializer points at /openapi.json, with validator badges off', async () => {
    const page = await anon.request('GET', '/docs/');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.equal('text/html;charset=utf-8');
    expect(page.headers['cache-control']).to.equal(REVALIDATE);
    expect(page.headers['content-security-policy']).to.equal(DOCS_CSP);
    expect(page.text).to.contain('<script src="init.js"></script>');
    const init = await anon.request('GET', '/docs/init.js');
    expect(init.status).to.equal(200);
    expect(init.headers['cache-control']).to.equal(REVALIDATE);
    const url = /url: new URL\('([^']+)', window\.location\.href\)/.exec(init.text);
    expect(url, 'the document URL in init.js').to.not.equal(null);
    expect(new URL(url![1]!, 'http://tickd.test/docs/').pathname).to.equal('/openapi.json');
    expect(init.text).to.contain('validatorUrl: null');
    expect(init.text).to.not.contain('petstore');
  });

  it('the Swagger UI assets the shell loads come from the installed swagger-ui-dist, under its version, cached for a year', async () => {
    const shell = readFileSync(join(DOCS_SHELL_DIR, 'index.html'), 'utf8');
    const vendorRefs = [...shell.matchAll(/(?:src|href)="(vendor\/[^"]+)"/g)].map((m) => m[1]!);
    expect(vendorRefs).to.include.members([`vendor/${dist.version}/swagger-ui.css`, `vendor/${dist.version}/swagger-ui-bundle.js`]);
    for (const ref of vendorRefs) {
      expect(ref, 'a swagger-ui-dist upgrade must update lib/http/ui/docs/index.html').to.match(new RegExp(`^vendor/${dist.version.replace(/\./g, '\\.')}/`));
      const res = await anon.request('GET', `/docs/${ref}`);
      expect(res.status, ref).to.equal(200);
      expect(res.headers['cache-control'], ref).to.equal(IMMUTABLE);
      expect(res.headers['etag'], ref).to.match(/^W\/"\d+-\d+"$/);
      expect(res.text === readFileSync(join(dist.dir, ref.slice(`vendor/${dist.version}/`.length)), 'utf8'), ref).to.equal(true);
    }
  });

  it('/ui and /docs redirect to their slash form with a relative Location, keeping the query', async () => {
    for (const [path, location] of [['/ui', 'ui/'], ['/docs', 'docs/'], ['/ui?x=1', 'ui/?x=1']] as const) {
      const res = await anon.request('GET', path);
      expect(res.status, path).to.equal(301);
      expect(res.headers['location'], path).to.equal(location);
      expect(new URL(location, `http://tickd.test${path}`).pathname).to.equal(`${path.split('?')[0]}/`);
    }
  });

  it('anything else under /ui/ and /docs/ is 404 {"error":"not found"}: no traversal, no package files, no petstore initializer', async () => {
    const missing = [
      '/ui/x', '/ui/x.js', '/ui/../lib/http/static.ts', '/ui/%2e%2e/package.json', '/ui/..%2fstatic.ts', '/ui//index.html',
      '/docs/vendor/x', `/docs/vendor/${dist.version}/index.html`, `/docs/vendor/${dist.version}/package.json`,
      `/docs/vendor/${dist.version}/swagger-initializer.js`, `/docs/vendor/${dist.version}/oauth2-redirect.html`,
      '/docs/vendor/0.0.0/swagger-ui.css', '/docs/swagger-initializer.js', '/docs/swagger-ui.css', '/docs/vendor/../init.js',
    ];
    for (const path of missing) {
      const res = await anon.request('GET', path);
      expect(res.status, path).to.equal(404);
      expect(res.headers['content-type'], path).to.equal('application/json; charset=utf-8');
      expect(res.text, path).to.equal('{"error":"not found"}');
      expect(res.headers['cache-control'], path).to.equal(undefined);
    }
  });

  it('only GET and HEAD: other methods are 405 with Allow; HEAD has the headers and no body; a Range header is ignored', async () => {
    for (const [method, path] of [['POST', '/ui/'], ['PUT', '/ui/app.js'], ['DELETE', '/docs/'], ['PATCH', '/docs/init.js'], ['POST', '/ui']]) {
      const res = await anon.request(method!, path!, { body: method === 'DELETE' ? undefined : '{}' });
      expect(res.status, `${method} ${path}`).to.equal(405);
      expect(res.headers['allow'], `${method} ${path}`).to.equal('GET, HEAD');
      expect(JSON.parse(res.text)).to.deep.equal({ error: `method ${method} not allowed; allowed: GET, HEAD` });
    }
    const head = await anon.request('HEAD', '/ui/app.js');
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
    expect(Number(head.headers['content-length'])).to.equal(readFileSync(join(CONSOLE_DIR, 'app.js')).length);
    for (const range of ['bytes=5-2', 'bytes=0-3', 'bytes=999999-', 'bytes=abc']) {
      const res = await anon.request('GET', '/ui/style.css', { headers: { range } });
      expect(res.status, range).to.equal(200);
      expect(res.text, range).to.equal(readFileSync(join(CONSOLE_DIR, 'style.css'), 'utf8'));
    }
  });

  it('nothing our pages are made of refers to another origin (the only absolute URL is the SVG namespace name)', () => {
    // The browser test watches the vendor bundle's actual requests; these are our own files.
    const served = [...files(CONSOLE_DIR).map((f) => join(CONSOLE_DIR, f)), ...files(DOCS_SHELL_DIR).map((f) => join(DOCS_SHELL_DIR, f))];
    expect(served.length).to.be.greaterThan(8);
    for (const file of served) {
      const text = readFileSync(file, 'utf8');
      const absolute = [...text.matchAll(/(?:https?:)?\/\/[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s"'`)]*/g)].map((m) => m[0]);
      const allowed = extname(file) === '.svg' ? ['http://www.w3.org/2000/svg'] : [];
      expect(absolute.filter((u) => !allowed.includes(u)), file).to.deep.equal([]);
      if (extname(file) === '.svg') expect(text, file).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      // Every reference a page or module makes is relative to this server.
      const refs = [
        ...[...text.matchAll(/\b(?:src|href|action)="([^"]*)"/g)].map((m) => m[1]!),
        ...[...text.matchAll(/\bfrom\s+'([^']*)'/g)].map((m) => m[1]!),
        ...[...text.matchAll(/\burl\(\s*['"]?([^'")]*)/g)].map((m) => m[1]!),
        ...[...text.matchAll(/@import\s+['"]([^'"]*)/g)].map((m) => m[1]!),
      ];
      for (const ref of refs) expect(ref, `${file}: ${ref}`).to.match(/^(?:\.{0,2}\/)?[\w.-][\w./-]*$|^#[\w-]+$/);
    }
  });

  it('the OpenAPI document leaves the static pages out (it describes the JSON API)', async () => {
    const doc = JSON.parse((await anon.request('GET', '/openapi.json')).text) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/ui') || p.startsWith('/docs'))).to.deep.equal([]);
  });
});
