import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import { buildOpenApi } from '../../../lib/http/openapi.ts';
import { routes } from '../../../lib/http/app.ts';
import { toJson } from '../../../lib/http/json.ts';
import type { HttpContext } from '../../../lib/http/route.ts';
import { buildTokenTable } from '../../../lib/auth/verify.ts';
import { RUNNER_TYPES } from '../../../lib/domain/runner-spec.ts';
import { SchemaChecker } from './schema-check.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking an untyped document

const METHODS = ['get', 'head', 'put', 'delete', 'post', 'patch', 'options', 'trace'];

function document(auth: boolean, cluster: boolean): Obj {
  // Through the JSON text, as served: what a client sees.
  return JSON.parse(toJson(buildOpenApi({ version: '9.8.7', auth, cluster }))) as Obj;
}

function operations(doc: Obj): Array<{ path: string; method: string; op: Obj }> {
  const out = [];
  for (const [path, item] of Object.entries(doc['paths'] as Obj)) {
    for (const method of METHODS) if ((item as Obj)[method] !== undefined) out.push({ path, method, op: (item as Obj)[method] as Obj });
  }
  return out;
}

const ctx = (auth: boolean, cluster: boolean): HttpContext => ({
  dispatch: () => Promise.reject(new Error('not used')),
  readiness: () => 'ready',
  tokens: auth ? buildTokenTable([{ name: 't', secret: 's', namespace: '*' }]) : null,
  version: '9.8.7',
  cluster,
});

const CLUSTER_SCHEMAS = ['Cluster', 'ClusterNode', 'NodeRole'];
/** The runner kinds PUT /rules accepts (amqp and redis are TCP only). */
const HTTP_RUNNER_KINDS = ['shell', 'direct', 'http', 'awf'];

/** Every schema object in the document's components, nested ones included. */
function* schemaObjects(value: unknown): Generator<Obj> {
  if (Array.isArray(value)) for (const v of value) yield* schemaObjects(v);
  else if (typeof value === 'object' && value !== null) {
    yield value as Obj;
    for (const v of Object.values(value)) yield* schemaObjects(v);
  }
}

describe('http/openapi document', () => {
  for (const [auth, cluster] of [[true, true], [true, false], [false, true], [false, false]] as const) {
    describe(`${auth ? 'with' : 'without'} an auth_file, ${cluster ? 'cluster mode' : 'a node alone'}`, () => {
      const doc = document(auth, cluster);

      it('is a valid OpenAPI 3.1.1 document (swagger-parser) carrying the product version', async () => {
        expect(doc['openapi']).to.equal('3.1.1');
        expect(doc['info'].version).to.equal('9.8.7');
        const validated = await SwaggerParser.validate(structuredClone(doc) as never);
        expect((validated as Obj)['openapi']).to.equal('3.1.1');
      });

      it('has schemas that compile under ajv strict mode', () => {
        expect(new SchemaChecker(doc, true).compileAll()).to.include.members(['Job', 'Rule', 'Runner', 'RuleInput', 'Stats', 'Error']);
      });

      it(cluster ? 'documents GET /cluster and its schemas' : 'has no /cluster path and none of its schemas', () => {
        const names = Object.keys(doc['components'].schemas as Obj);
        if (cluster) {
          expect(doc['paths']['/cluster'].get.operationId).to.equal('getCluster');
          expect(names).to.include.members(CLUSTER_SCHEMAS);
        } else {
          expect(doc['paths']).not.to.have.property('/cluster');
          expect(names).not.to.include.any.members(CLUSTER_SCHEMAS);
        }
        // Every schema is reachable from some operation: no leftovers of an omitted path.
        const text = JSON.stringify(doc['paths']) + JSON.stringify(doc['components'].responses) + JSON.stringify(doc['components'].parameters);
        const reached = new Set<string>();
        const visit = (s: string): void => {
          for (const m of s.matchAll(/#\/components\/schemas\/(\w+)/g)) {
            if (reached.has(m[1]!)) continue;
            reached.add(m[1]!);
            visit(JSON.stringify(doc['components'].schemas[m[1]!]));
          }
        };
        visit(text);
        expect(names.filter((n) => !reached.has(n))).to.deep.equal([]);
      });

      it('documents exactly the served routes, HEAD beside every GET, with unique operationIds', () => {
        const served = new Set<string>();
        for (const r of routes(ctx(auth, cluster))) {
          const path = r.path.replace(/:(\w+)/g, '{$1}');
          served.add(`${r.method.toLowerCase()} ${path}`);
          if (r.method === 'GET') served.add(`head ${path}`);
        }
        const documented = operations(doc).map(({ method, path }) => `${method} ${path}`);
        expect(new Set(documented)).to.deep.equal(served);
        const ids = operations(doc).map(({ op }) => op['operationId'] as string);
        expect(new Set(ids).size).to.equal(ids.length);
      });

      it('declares every path template parameter, on each operation (Swagger UI leaves path-level $refs unresolved)', () => {
        for (const { path, method, op } of operations(doc)) {
          expect(doc['paths'][path].parameters, path).to.equal(undefined);
          const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
          const declared = (op['parameters'] ?? []).map((p: Obj) => doc['components'].parameters[String(p['$ref']).split('/').pop()!])
            .filter((p: Obj) => p['in'] === 'path').map((p: Obj) => p['name']);
          expect(declared, `${method} ${path}`).to.deep.equal(names);
        }
      });

      it(auth ? 'requires the bearer scheme everywhere but /health, /ready and /openapi.json' : 'has no security requirement and no 401/403', () => {
        for (const { path, method, op } of operations(doc)) {
          const open = path === '/health' || path === '/ready' || path === '/openapi.json';
          const statuses = Object.keys(op['responses'] as Obj);
          if (auth) {
            expect(op['security'], `${method} ${path}`).to.deep.equal(open ? [] : undefined);
            expect(statuses.includes('401'), `${method} ${path}`).to.equal(!open);
          } else {
            expect(op['security'], `${method} ${path}`).to.equal(undefined);
            expect(statuses.some((s) => s === '401' || s === '403'), `${method} ${path}`).to.equal(false);
          }
        }
        if (auth) {
          expect(doc['security']).to.deep.equal([{ bearer: [] }]);
          expect(doc['components'].securitySchemes.bearer).to.include({ type: 'http', scheme: 'bearer' });
        } else {
          expect(doc['security']).to.equal(undefined);
          expect(doc['components'].securitySchemes).to.equal(undefined);
        }
      });

      it('documents GET /ready as the readiness probe: 200 ready, 503 starting or stopping, no token', () => {
        const get = doc['paths']['/ready'].get as Obj;
        expect(get['operationId']).to.equal('getReady');
        expect(Object.keys(get['responses'] as Obj).sort()).to.deep.equal(['200', '500', '503']);
        const examples = (status: string): unknown[] =>
          Object.values(get['responses'][status].content['application/json'].examples as Obj).map((e) => (e as Obj)['value']);
        expect(examples('200')).to.deep.equal([{ status: 'ready' }]);
        expect(examples('503')).to.deep.equal([{ error: 'not ready: starting' }, { error: 'not ready: stopping' }]);
        expect(doc['paths']['/ready'].head.operationId).to.equal('getReadyHead');
      });

      it('names one server, relative: the daemon serving the document is the API', () => {
        expect(doc['servers']).to.have.length(1);
        expect(doc['servers'][0].url).to.equal('/');
      });

      it(`declares the tags jobs, rules, schedules, meta${cluster ? ', cluster' : ''} and files every operation under exactly one of them`, () => {
        const declared = (doc['tags'] as Obj[]).map((t) => t['name'] as string);
        expect(declared).to.deep.equal(cluster ? ['jobs', 'rules', 'schedules', 'meta', 'cluster'] : ['jobs', 'rules', 'schedules', 'meta']);
        for (const t of doc['tags'] as Obj[]) expect(t['description'], t['name']).to.be.a('string').and.not.equal('');
        const used = new Set<string>();
        for (const { path, method, op } of operations(doc)) {
          expect(op['tags'], `${method} ${path}`).to.have.length(1);
          used.add(op['tags'][0]);
          const expected = path.startsWith('/jobs') ? 'jobs' : path.startsWith('/rules') ? 'rules' : path.startsWith('/schedules') ? 'schedules' : path === '/cluster' ? 'cluster' : 'meta';
          expect(op['tags'][0], `${method} ${path}`).to.equal(expected);
        }
        expect([...used].sort()).to.deep.equal([...declared].sort());
      });

      it('gives every operation a summary and a description', () => {
        for (const { path, method, op } of operations(doc)) {
          expect(op['summary'], `${method} ${path}`).to.be.a('string').and.not.equal('');
          expect(op['description'], `${method} ${path}`).to.be.a('string').and.not.equal('');
        }
      });

      it('has examples for every request body and every response body, each valid against its schema', () => {
        const checker = new SchemaChecker(doc, true);
        let checked = 0;
        for (const { path, method, op } of operations(doc)) {
          if (op['requestBody'] !== undefined) {
            const examples = Object.values((op['requestBody'].content['application/json'].examples ?? {}) as Obj);
            expect(examples, `${method} ${path} request`).to.have.length.above(0);
            for (const e of examples) {
              expect(checker.checkRequest(method, path, JSON.stringify(e['value'])), `${method} ${path} request: ${e['summary']}`).to.deep.equal([]);
              checked++;
            }
          }
          for (const status of Object.keys(op['responses'] as Obj)) {
            const media = checker.response(method, path, Number(status))['content'] as Obj | undefined;
            if (media === undefined) continue;
            if (media['application/json'] === undefined) {
              // GET /metrics: Prometheus text; its examples are text.
              const texts = Object.values((media['text/plain'].examples ?? {}) as Obj);
              expect(texts, `${method} ${path} ${status}`).to.have.length.above(0);
              for (const e of texts) expect(e['value'], `${method} ${path} ${status}: ${e['summary']}`).to.be.a('string').and.not.equal('');
              continue;
            }
            const examples = Object.values((media['application/json'].examples ?? {}) as Obj);
            expect(examples, `${method} ${path} ${status}`).to.have.length.above(0);
            for (const e of examples) {
              expect(checker.check(method, path, Number(status), JSON.stringify(e['value'])), `${method} ${path} ${status}: ${e['summary']}`).to.deep.equal([]);
              checked++;
            }
          }
        }
        expect(checked).to.be.above(30);
      });

      it('marks nanosecond integers int64, writes their examples exactly, and says in the document how to read them', () => {
        const schemas = doc['components'].schemas;
        expect(schemas.Job.properties.execution).to.include({ type: 'integer', format: 'int64' });
        expect(schemas.Stats.properties.uptime_ns).to.include({ type: 'integer', format: 'int64' });
        const nanos = [...schemaObjects(schemas)].filter((s) => s['type'] === 'integer' && /nanosecond/i.test(String(s['description'] ?? '')));        // execution and retry_at (Job, JobDetail), uptime_ns, the attempt's started_ns, lateness_ns,
        // held_ns, duration_ns; a schedule's start, end, next (Schedule, ScheduleRun), ScheduleInput's
        // start and end, the instants of NextOccurrences, an occurrence's nominal and from; a job's
        // waiting_for_node.since_ns (cluster mode's placement, in every document: JobDetail is).
        expect(nanos).to.have.length(21);
        for (const s of nanos) {
          expect(s['format']).to.equal('int64');
          expect(s['description']).to.contain('2^53');
        }
        expect(doc['info'].description).to.contain('2^53').and.contain('int64');
        // Example values above 2^53 keep every digit in the served text.
        expect(toJson(buildOpenApi({ version: '9.8.7', auth, cluster }))).to.contain('"execution":1893484800123456789');
        expect(schemas.Schedule.properties.next.anyOf[0]).to.include({ type: 'integer', format: 'int64' });
        expect(toJson(buildOpenApi({ version: '9.8.7', auth, cluster }))).to.contain('"end":1893542400000000000');
      });

      it('maps every runner kind to its schema, in agreement with each schema\'s `type` constant', () => {
        const schemas = doc['components'].schemas;
        for (const [union, kinds] of [['Runner', RUNNER_TYPES], ['RunnerInput', HTTP_RUNNER_KINDS]] as const) {
          const { propertyName, mapping } = schemas[union].discriminator as { propertyName: string; mapping: Record<string, string> };
          expect(propertyName, union).to.equal('type');
          expect(Object.keys(mapping), union).to.deep.equal([...kinds]);
          expect(schemas[union].oneOf.map((r: Obj) => r['$ref']), union).to.deep.equal(Object.values(mapping));
          for (const [kind, target] of Object.entries(mapping)) {
            expect(schemas[target.split('/').pop()!].properties.type, `${union} ${kind}`).to.deep.equal({ const: kind });
          }
        }
      });

      it(auth ? 'uses every shared response' : 'uses every shared response, and has no 401/403 ones', () => {
        const names = Object.keys(doc['components'].responses as Obj);
        const text = JSON.stringify(doc['paths']);
        for (const name of names) expect(text, name).to.contain(`"#/components/responses/${name}"`);
        expect(names.includes('Unauthorized') && names.includes('Forbidden')).to.equal(auth);
      });

      it('documents no body for HEAD responses', () => {
        for (const { method, op } of operations(doc)) {
          if (method !== 'head') continue;
          for (const r of Object.values(op['responses'] as Obj)) expect((r as Obj)['content']).to.equal(undefined);
        }
      });
    });
  }

  describe('schemas against sample bodies', () => {
    const SCHEDULE = '{"id":"s.1","cron":"*/5 * * * *","every":null,"tz":"UTC","start":null,"end":1993484800123456789,"limit":3,"jitter":"0s",'
      + '"missed":"once","catchup":"1h","overlap":"allow","paused":false,"keep":10,"next":1893484800123456789,"fired":0,"skipped":{"missed":0,"overlap":0}}';
    const checker = new SchemaChecker(document(true, true));
    const ok = (method: string, path: string, status: number, body: string): void => {
      expect(checker.check(method, path, status, body)).to.deep.equal([]);
    };

    it('accepts the shapes the routes write', () => {
      ok('GET', '/jobs/{id}', 200, '{"id":"a.1","status":"planned","execution":1775822400123456789,"attempt":0}');
      ok('GET', '/jobs', 200, '[{"id":"a.1","status":"triggered","execution":1775822400123456789,"attempt":2,"retry_at":1775822403123456789}]');
      ok('GET', '/rules/{id}', 200, '{"id":"r","pattern":"","runner":{"type":"shell","command":"x"},"retry":{"attempts":3,"backoff":"fixed","delay":"1s","max_delay":"1h","jitter":0},"concurrency":2,"rate":{"limit":5,"per":"1m"}}');
      ok('GET', '/jobs', 200, '[]');
      ok('GET', '/rules/{id}', 200, '{"id":"r","pattern":"","runner":{"type":"redis","url":"redis://h","command":"SET","key":"k"}}');
      ok('DELETE', '/jobs/{id}', 204, '');
      ok('PUT', '/jobs/{id}', 415, '{"error":"Content-Type must be application/json"}');
      ok('GET', '/cluster', 200, '{"cluster":"c","node":"n1","role":"leader","leader":"n1","last_seq":7,"applied_seq":7,"nodes":[{"name":"n1","role":"leader","applied_seq":7,"lag":0,"seen_ago_ms":0,"format":2}],"format":2,"active_format":2,"upgrade_needed":null}');
      ok('GET', '/cluster', 200, '{"cluster":"c","node":"n2","role":"follower","leader":null,"last_seq":0,"applied_seq":0,"nodes":[],"format":2,"active_format":1,"upgrade_needed":{"format":3,"seq":9,"subject":"c.j.x"}}');
      ok('GET', '/whoami', 200, '{"name":"ops","namespace":"ops.","auth_enabled":true}');
      ok('GET', '/whoami', 200, '{"name":null,"namespace":"*","auth_enabled":false}');
      ok('GET', '/schedules/{id}', 200, SCHEDULE);
      ok('GET', '/schedules/{id}', 200, SCHEDULE.replace('"cron":"*/5 * * * *","every":null', '"cron":null,"every":"1h30m"').replace('"next":1893484800123456789', '"next":null'));
      ok('GET', '/schedules', 200, `{"schedules":[${SCHEDULE}]}`);
      ok('POST', '/schedules/{id}/run', 200, SCHEDULE.replace(/\}$/, ',"job":"s.1:manual-20300101T000000Z"}'));
      ok('POST', '/schedules/{id}/pause', 404, '{"error":"schedule \\"s.1\\" does not exist"}');
      ok('GET', '/schedules/{id}/next', 200, '{"next":[1893484800123456789,1893484800123456790]}');
      ok('GET', '/schedules/{id}/occurrences', 200, '{"occurrences":[{"nominal":3,"job":null,"outcome":"skipped","reason":"missed","from":1,"count":2},{"nominal":1,"job":"s.1:19700101T000000.000000001Z","outcome":"held"}]}');
      ok('DELETE', '/schedules/{id}', 204, '');
    });

    it('accepts the schedule bodies PUT /schedules takes and refuses ones it refuses for their shape', () => {
      for (const body of ['{"every":"30s"}', '{"cron":"* * * * *","tz":"UTC","start":"2030-01-01T00:00:00Z","end":1893484800123456789,"limit":null}', SCHEDULE]) {
        expect(checker.checkRequest('PUT', '/schedules/{id}', body), body).to.deep.equal([]);
      }
      for (const body of ['{}', '{"cron":"* * * * *","every":"1s"}', '{"every":"30s","interval":1}', '{"every":30}', '{"every":"1s","missed":"never"}', '{"cron":null,"every":null}']) {
        expect(checker.checkRequest('PUT', '/schedules/{id}', body), body).to.have.length.above(0);
      }
    });

    it('accepts request bodies in both runner forms and refuses ones the routes refuse', () => {
      expect(checker.checkRequest('PUT', '/rules/{id}', '{"pattern":"a.","runner":{"type":"awf","workflow":"w"}}')).to.deep.equal([]);
      expect(checker.checkRequest('PUT', '/rules/{id}', '{"pattern":"a.","runner":"http","args":["GET","http://x"]}')).to.deep.equal([]);
      expect(checker.checkRequest('PUT', '/jobs/{id}', '{"execution":"2099-01-01T00:00:00Z"}')).to.deep.equal([]);
      expect(checker.checkRequest('PUT', '/rules/{id}', '{"pattern":"a.","runner":"shell"}')).to.have.length.above(0);
      expect(checker.checkRequest('PUT', '/rules/{id}', '{"pattern":"a.","runner":{"type":"shell","command":"x"},"args":[]}')).to.have.length.above(0);
      expect(checker.checkRequest('PUT', '/rules/{id}', '{"pattern":"a.","runner":{"type":"redis","url":"redis://h","command":"SET","key":"k"}}')).to.have.length.above(0);
      expect(checker.checkRequest('PUT', '/jobs/{id}', '{"execution":1}')).to.have.length.above(0);
      expect(checker.checkRequest('PUT', '/rules/{id}', '{"pattern":"a.","runner":"shell","args":["x"],"retry":{"attempts":3,"delay":"1s"},"concurrency":1,"rate":{"limit":1,"per":"1s"}}')).to.deep.equal([]);
      for (const options of ['"retry":{"delay":"1s"}', '"retry":{"attempts":3,"tries":1}', '"concurrency":0', '"rate":{"limit":1}', '"rate":{"limit":1,"per":"1s","burst":2}', '"retry":{"attempts":2,"delay":"soon"}']) {
        expect(checker.checkRequest('PUT', '/rules/{id}', `{"pattern":"a.","runner":{"type":"shell","command":"x"},${options}}`), options).to.have.length.above(0);
      }
    });

    it('rejects shapes the routes must not write', () => {
      expect(checker.check('GET', '/jobs/{id}', 200, '{"id":"a","status":"done","execution":1,"attempt":1}')).to.have.length.above(0);
      expect(checker.check('GET', '/jobs/{id}', 200, '{"id":"a","status":"planned","execution":"1","attempt":0}')).to.have.length.above(0);
      // Every job says its attempt; retry_at is a time like execution.
      expect(checker.check('GET', '/jobs', 200, '[{"id":"a","status":"planned","execution":1}]')).to.have.length.above(0);
      expect(checker.check('GET', '/jobs/{id}', 200, '{"id":"a","status":"triggered","execution":1,"attempt":2,"retry_at":"5s"}')).to.have.length.above(0);
      expect(checker.check('GET', '/rules/{id}', 200, '{"id":"r","pattern":"","runner":{"type":"shell","command":"x"},"retry":{"attempts":3}}')).to.have.length.above(0);
      expect(checker.check('GET', '/rules/{id}', 200, '{"id":"r","pattern":"","runner":{"type":"shell"}}')).to.have.length.above(0);
      expect(checker.check('GET', '/jobs/{id}', 404, '{"error":"x","extra":1}')).to.have.length.above(0);
      expect(checker.check('GET', '/jobs/{id}', 413, '{"error":"x"}')).to.have.length.above(0);
      expect(checker.check('DELETE', '/jobs/{id}', 204, '{}')).to.have.length.above(0);
      const view = '{"cluster":"c","node":"n","role":"leader","leader":"n","last_seq":1,"applied_seq":1,"nodes":[],"format":2,"active_format":2,"upgrade_needed":null}';
      expect(checker.check('GET', '/cluster', 200, view.replace('"last_seq"', '"lastSeq"'))).to.have.length.above(0);
      expect(checker.check('GET', '/cluster', 200, view.replace('"role":"leader"', '"role":"primary"'))).to.have.length.above(0);
      expect(checker.check('GET', '/cluster', 200, view.replace('"nodes":[]', '"nodes":[{"name":"n","role":"leader","applied_seq":1,"lag":-1,"seen_ago_ms":0,"format":2}]'))).to.have.length.above(0);
      // /whoami never carries more than the name and namespace (no secret).
      expect(checker.check('GET', '/whoami', 200, '{"name":"ops","namespace":"ops.","auth_enabled":true,"secret":"s"}')).to.have.length.above(0);
      expect(checker.check('GET', '/whoami', 200, '{"name":"ops","namespace":"ops."}')).to.have.length.above(0);
      // A schedule always carries every field; GET /schedules is an object; run always names its job.
      expect(checker.check('GET', '/schedules/{id}', 200, SCHEDULE.replace(',"skipped":{"missed":0,"overlap":0}', ''))).to.have.length.above(0);
      expect(checker.check('GET', '/schedules/{id}', 200, SCHEDULE.replace('"jitter":"0s"', '"jitter":0'))).to.have.length.above(0);
      expect(checker.check('GET', '/schedules', 200, `[${SCHEDULE}]`)).to.have.length.above(0);
      expect(checker.check('POST', '/schedules/{id}/run', 200, SCHEDULE)).to.have.length.above(0);
      expect(checker.check('GET', '/schedules/{id}/occurrences', 200, '{"occurrences":[{"nominal":1,"job":null,"outcome":"done"}]}')).to.have.length.above(0);
      // Every node answers it itself: a 404 would be a route that should not exist.
      expect(checker.check('GET', '/cluster', 404, '{"error":"x"}')).to.have.length.above(0);
      expect(new SchemaChecker(document(true, false)).check('GET', '/cluster', 200, view)).to.have.length.above(0);
    });
  });
});
