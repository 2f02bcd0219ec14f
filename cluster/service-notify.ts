// Tells a service manager that the daemon is ready (tickd(8) "Readiness and health"): under
// systemd with Type=notify, the unit is active, and units ordered after it start, only once
// this says READY=1 (sd_notify(3)), not when the process starts.
//
// The message is a datagram to the unix socket NOTIFY_SOCKET names, and Node has no unix
// datagram sockets: systemd-notify(1) sends it, spawned once at ready. It runs as a child of
// the primary, not as the unit's main process, so the unit needs NotifyAccess=all (so it does
// too when bin/tickd is a launcher running the daemon on another Node). systemd-notify waits
// until systemd has processed the message (its barrier, systemd 246 and later), so the
// message is never dropped for a sender that exited first. Best effort: a failure is logged,
// and systemd then fails the start at TimeoutStartSec.
//
// NOTIFY_SOCKET is taken out of the environment at start (takeNotifySocket), before any worker,
// runner or compaction child is started: none of them inherits it, so no job can speak for
// the daemon through it.
import { spawn } from 'node:child_process';
import type { Logger } from '../lib/log.ts';

/** NOTIFY_SOCKET's value (null: no service manager listens), removed from `env`. */
export function takeNotifySocket(env: NodeJS.ProcessEnv): string | null {
  const socket = env['NOTIFY_SOCKET'];
  delete env['NOTIFY_SOCKET'];
  return socket === undefined || socket === '' ? null : socket;
}

/** Sends READY=1 to `socket` through systemd-notify; logs a failure, never throws. */
export function notifyReady(socket: string, log: Logger): void {
  const child = spawn('systemd-notify', ['--ready'], {
    env: { ...process.env, NOTIFY_SOCKET: socket },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let spawned = true;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => { if (stderr.length < 1024) stderr += chunk; });
  child.on('error', (err) => {
    spawned = false;
    log.warn({ err: err.message }, 'systemd-notify could not be run: the service manager was not told that tickd is ready');
  });
  // 'close', not 'exit': its stderr has been read whole by then.
  child.on('close', (code, signal) => {
    if (!spawned) return;
    if (code === 0) log.info('service manager told: ready');
    else log.warn({ code, signal, stderr: stderr.trim() }, 'systemd-notify failed: the service manager was not told that tickd is ready');
  });
}
