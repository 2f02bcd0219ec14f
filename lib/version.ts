// The product version: package.json's, reported by --version, service.version and the OpenAPI info.
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The time zone database schedules' nominal times are computed with (the runtime's): shown by `tickd --version`. */
export function zoneDatabase(): string {
  return process.versions.tz ?? 'unknown';
}
