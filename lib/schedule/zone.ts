// Time zone names: which the zone database knows, and its own name for each.
/**
 * Zone names found good, each with the zone database's own name for it: building a formatter
 * to check one costs ~200 µs and ~8 KB. The database takes any letter case and links
 * (`us/EASTERN`), so one zone has very many spellings; croner keeps a formatter per zone string
 * it is given, for good (26-45 KB each: 50 000 spellings set and removed took the primary to
 * 1.6 GB), so croner is only ever given the database's name (zoneOf), a bounded set.
 */
const knownZones = new Map<string, string>();
const ZONES_KEPT = 1024;

/** null for an IANA zone name the runtime's zone database knows, else why not. */
export function zoneError(tz: unknown): string | null {
  if (typeof tz === 'string' && knownZones.has(tz)) return null;
  if (typeof tz !== 'string' || tz === '' || tz.length > 64) return 'must be an IANA time zone name such as Europe/Berlin or UTC';
  // The runtime also takes fixed offsets (+01:00) as zones: they are not IANA names, and a
  // schedule meant to follow a place's clock must not silently ignore its DST.
  if (!/^[A-Za-z]/.test(tz)) return `${JSON.stringify(tz)} is not an IANA time zone name (such as Europe/Berlin or UTC)`;
  try {
    const name = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
    if (knownZones.size >= ZONES_KEPT) knownZones.clear();
    knownZones.set(tz, name);
    return null;
  } catch {
    return `${JSON.stringify(tz)} is not a time zone this tickd's zone database knows`;
  }
}

/** The zone database's name for a zone found good (`us/eastern` -> America/New_York); the same rules. */
export function zoneOf(tz: string): string {
  const known = knownZones.get(tz);
  if (known !== undefined) return known;
  return zoneError(tz) === null ? knownZones.get(tz)! : tz;
}
