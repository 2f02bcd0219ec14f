// A local OTLP/HTTP collector for tests: node:http on 127.0.0.1 port 0, taking the JSON
// encoding the *-otlp-http exporters send (gzip bodies too) on /v1/metrics, /v1/traces and
// /v1/logs, and flattening what arrives into spans, metrics and log records with their
// resource attributes. Modes: 'ok' answers 200 `{}`; 'hang' accepts and never answers (a
// stuck collector); a number answers that HTTP status.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type ReceiverMode = 'ok' | 'hang' | number;

/** OTLP JSON AnyValue -> plain JS (int64 values arrive as strings or numbers). */
export type Plain = string | number | boolean | null | Plain[] | { [k: string]: Plain };

export interface ReceivedSpan {
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Record<string, Plain>;
  readonly resource: Record<string, Plain>;
}

export interface ReceivedMetric {
  readonly name: string;
  readonly unit: string;
  /** 'sum' | 'gauge' | 'histogram' | ... (the data field present). */
  readonly type: string;
  readonly monotonic: boolean | undefined;
  readonly dataPoints: ReadonlyArray<{ readonly attributes: Record<string, Plain>; readonly value: number | undefined; readonly count: number | undefined }>;
  readonly resource: Record<string, Plain>;
}

export interface ReceivedLog {
  readonly body: Plain;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: Record<string, Plain>;
  readonly resource: Record<string, Plain>;
}

interface KeyValue { key: string; value: AnyValueJson }
interface AnyValueJson {
  stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number;
  arrayValue?: { values?: AnyValueJson[] }; kvlistValue?: { values?: KeyValue[] };
}
type Json = Record<string, unknown>;

export class OtlpReceiver {
  readonly url: string;
  mode: ReceiverMode;
  readonly spans: ReceivedSpan[] = [];
  readonly metrics: ReceivedMetric[] = [];
  readonly logs: ReceivedLog[] = [];
  /** Every request seen, answered or not: path and content type. */
  readonly requests: Array<{ path: string; contentType: string }> = [];
  /** Bodies that could not be decoded (a protobuf body, broken JSON). */
  readonly errors: string[] = [];
  private readonly server: Server;

  private constructor(server: Server, mode: ReceiverMode) {
    this.server = server;
    this.mode = mode;
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  static start(mode: ReceiverMode = 'ok'): Promise<OtlpReceiver> {
    return new Promise((resolve, reject) => {
      let receiver: OtlpReceiver | null = null;
      const server = createServer((req, res) => receiver?.handle(req, res));
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        receiver = new OtlpReceiver(server, mode);
        resolve(receiver);
      });
    });
  }

  metricNames(): Set<string> {
    return new Set(this.metrics.map((m) => m.name));
  }

  /** Polls until `probe` returns something other than undefined. */
  async waitFor<T>(probe: () => T | undefined, timeoutMs = 10_000, what = 'telemetry'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; requests: ${JSON.stringify(this.requests.slice(-10))}; errors: ${this.errors.join('; ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0]!;
    const contentType = String(req.headers['content-type'] ?? '');
    this.requests.push({ path, contentType });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.ingest(path, contentType, String(req.headers['content-encoding'] ?? ''), Buffer.concat(chunks));
      if (this.mode === 'hang') return; // keep the request open until close()
      const status = this.mode === 'ok' ? 200 : this.mode;
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : '{"code":13,"message":"test collector error"}');
    });
  }

  private ingest(path: string, contentType: string, encoding: string, raw: Buffer): void {
    if (!contentType.startsWith('application/json')) {
      this.errors.push(`${path}: unsupported content type ${contentType}`);
      return;
    }
    let body: Json;
    try {
      body = JSON.parse((encoding === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')) as Json;
    } catch (err) {
      this.errors.push(`${path}: ${(err as Error).message}`);
      return;
    }
    if (path === '/v1/traces') this.ingestTraces(body);
    else if (path === '/v1/metrics') this.ingestMetrics(body);
    else if (path === '/v1/logs') this.ingestLogs(body);
    else this.errors.push(`unexpected path ${path}`);
  }

  private ingestTraces(body: Json): void {
    for (const rs of list(body['resourceSpans'])) {
      const resource = attrs(list((rs['resource'] as Json | undefined)?.['attributes']) as unknown as KeyValue[]);
      for (const ss of list(rs['scopeSpans'])) {
        for (const s of list(ss['spans'])) {
          this.spans.push({
            name: String(s['name']), kind: Number(s['kind']), traceId: String(s['traceId']), spanId: String(s['spanId']),
            startNs: BigInt(String(s['startTimeUnixNano'])), endNs: BigInt(String(s['endTimeUnixNano'])),
            attributes: attrs(list(s['attributes']) as unknown as KeyValue[]), resource,
          });
        }
      }
    }
  }

  private ingestMetrics(body: Json): void {
    for (const rm of list(body['resourceMetrics'])) {
      const resource = attrs(list((rm['resource'] as Json | undefined)?.['attributes']) as unknown as KeyValue[]);
      for (const sm of list(rm['scopeMetrics'])) {
        for (const m of list(sm['metrics'])) {
          const type = ['sum', 'gauge', 'histogram', 'exponentialHistogram', 'summary'].find((k) => k in m) ?? 'unknown';
          const data = (m[type] ?? {}) as Json;
          this.metrics.push({
            name: String(m['name']), unit: String(m['unit'] ?? ''), type,
            monotonic: typeof data['isMonotonic'] === 'boolean' ? data['isMonotonic'] : undefined,
            dataPoints: list(data['dataPoints']).map((p) => ({
              attributes: attrs(list(p['attributes']) as unknown as KeyValue[]),
              value: p['asInt'] !== undefined ? Number(p['asInt']) : p['asDouble'] !== undefined ? Number(p['asDouble']) : undefined,
              count: p['count'] !== undefined ? Number(p['count']) : undefined,
            })),
            resource,
          });
        }
      }
    }
  }

  private ingestLogs(body: Json): void {
    for (const rl of list(body['resourceLogs'])) {
      const resource = attrs(list((rl['resource'] as Json | undefined)?.['attributes']) as unknown as KeyValue[]);
      for (const sl of list(rl['scopeLogs'])) {
        for (const r of list(sl['logRecords'])) {
          this.logs.push({
            body: r['body'] === undefined ? null : plain(r['body'] as AnyValueJson),
            severityNumber: Number(r['severityNumber'] ?? 0), severityText: String(r['severityText'] ?? ''),
            traceId: String(r['traceId'] ?? ''), spanId: String(r['spanId'] ?? ''),
            attributes: attrs(list(r['attributes']) as unknown as KeyValue[]), resource,
          });
        }
      }
    }
  }
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}

function attrs(kvs: KeyValue[]): Record<string, Plain> {
  const out: Record<string, Plain> = {};
  for (const kv of kvs) out[kv.key] = plain(kv.value ?? {});
  return out;
}

function plain(v: AnyValueJson): Plain {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(plain);
  if (v.kvlistValue !== undefined) return attrs(v.kvlistValue.values ?? []);
  return null;
}
