// Namespace enforcement (tickd-protocol(7) AUTHENTICATION), in one place for TCP and HTTP:
// commands that name an identifier outside the principal's namespace are denied; list
// commands are narrowed to the namespace (the primary filters, so nothing outside it ever
// crosses IPC).
import type { Command } from '../domain/command.ts';
import { inNamespace } from '../domain/identifier.ts';
import { denied, type ErrorReply } from '../errors.ts';

export function scopeCommand(cmd: Command, namespace: string): Command | ErrorReply {
  if (namespace === '*') return cmd;
  switch (cmd.op) {
    case 'job.set':
    case 'job.get':
    case 'job.remove':
    case 'job.retry':
    case 'rule.get':
    case 'rule.remove':
    case 'schedule.get':
    case 'schedule.remove':
    case 'schedule.next':
    case 'schedule.pause':
    case 'schedule.run':
    case 'schedule.occurrences':
      return inNamespace(cmd.id, namespace) ? cmd : denied();
    case 'schedule.set':
      // Its occurrences' job identifiers begin with its own (lib/schedule/occurrence.ts): inside too.
      return inNamespace(cmd.schedule.id, namespace) ? cmd : denied();
    case 'rule.set':
      return inNamespace(cmd.rule.id, namespace) && inNamespace(cmd.rule.pattern, namespace) ? cmd : denied();
    case 'job.list':
    case 'rule.list':
    case 'schedule.list':
      return { ...cmd, scope: namespace };
    case 'stat':
    case 'cluster':
    case 'activity':
    case 'metrics':
      return cmd;
    default: {
      const never: never = cmd;
      return never;
    }
  }
}
