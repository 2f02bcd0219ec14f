// Daemons with HTTP for tests that talk to one through both interfaces: each comes with a TCP
// client and an HTTP client whose every answer is checked against the daemon's own OpenAPI
// document. end() closes the clients and kills the daemons (afterEach).
import { Daemon } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { HttpApi } from './http-client.ts';
import { logfileDaemon } from './logfile-helpers.ts';

export interface ApiDaemon {
  readonly d: Daemon;
  readonly tcp: LineClient;
  readonly api: HttpApi;
}

export class ApiDaemons {
  readonly #daemons: Daemon[] = [];
  readonly #clients: Array<{ close(): void }> = [];

  /** A daemon on a logfile in `dir` (the same `dir` again: a restart), or in memory without one. */
  async start(dir?: string): Promise<ApiDaemon> {
    const http = { http: { listen: '127.0.0.1:0' } };
    const d = dir === undefined ? await Daemon.start({ config: http }) : await logfileDaemon(dir, {}, http);
    this.#daemons.push(d);
    const tcp = await LineClient.connect(d.tcp);
    const api = new HttpApi(d.http!);
    this.#clients.push(tcp, api);
    api.useDocument(JSON.parse((await api.request('GET', '/openapi.json')).text));
    return { d, tcp, api };
  }

  /** Closed by end() too, before the daemons are killed. */
  closeAtEnd(c: { close(): void }): void {
    this.#clients.push(c);
  }

  async end(): Promise<void> {
    for (const c of this.#clients.splice(0)) c.close();
    for (const d of this.#daemons.splice(0)) await d.kill();
  }
}
