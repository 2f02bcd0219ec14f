// Reachability of the external services some tests need (Redis, RabbitMQ). Under CI=true a
// missing service fails the test: CI must exercise the real thing. Elsewhere the test is
// skipped, after saying which service is missing, so a laptop without RabbitMQ can still run
// the suite.
import { connect } from 'node:net';

export type ServiceName = 'redis' | 'rabbitmq';

/** Resolves true when a TCP connection to host:port opens within timeoutMs. */
export function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const seen = new Map<string, Promise<boolean>>();

/** Call from a before()/it(): fails under CI=true, else skips, when the service is unreachable. */
export async function requireService(ctx: Mocha.Context, name: ServiceName, host: string, port: number): Promise<void> {
  const key = `${host}:${port}`;
  let reachable = seen.get(key);
  if (reachable === undefined) {
    reachable = canConnect(host, port);
    seen.set(key, reachable);
  }
  if (await reachable) return;
  const message = `${name} is not reachable at ${host}:${port}`;
  if (process.env.CI === 'true') throw new Error(`${message} (required under CI=true)`);
  process.stderr.write(`      skipped: ${message}\n`);
  ctx.skip();
}
