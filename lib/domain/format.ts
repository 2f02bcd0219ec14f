// The logfile format this tickd works at (doc/logfile-format.md, "Extension records"). A
// format is what a reader must understand, not a release number:
//
// - format 1: ztick's records, type bytes 0 to 3. Their bytes never change meaning, so every
//   logfile ztick or an earlier tickd wrote loads in every later tickd.
// - format 2: this tickd. It reads extension records (type byte 4 and up), each of which says
//   in its first two bytes the lowest format that can read it, so that an older tickd refuses
//   a record it cannot read with one clear line instead of calling it damage. Type 4, the
//   format mark, is its only extension record.
// - format 3: schedules (type 5, a schedule's state; type 6, its removal). A log without
//   schedules holds no record that needs it, and stays readable by a format-2 tickd.
// - format 4: retries and limits (type 7, a job with retry state; type 8, a rule with
//   options). A log without them stays readable by a format-3 tickd.
// - format 5: a retry policy's failure classes (`retry.on`: bit 3 of a type 8 record's option
//   flags, and the classes after the other options). A type 8 record without them still needs
//   4 only, so a log that does not use `on` stays readable by a format-4 tickd.
// - format 6: the node tags a rule's jobs require (the rule option `on`: bit 4 of a type 8
//   record's option flags, and the tags after the other options). A type 8 record without
//   them still needs 4, or 5 with `retry.on`, so a log that does not use `on` stays readable
//   by a format-5 tickd.
//
// A future kind of record (or a new meaning for a byte of an existing one) raises
// FORMAT_VERSION; only the records that need it say so, so a log that does not use it stays
// readable by older tickd.

export const FORMAT_VERSION = 6;

/** The format that adds schedule records. */
export const SCHEDULES_FORMAT = 3;

/** The format that adds a job's retry state and a rule's options. */
export const RETRIES_FORMAT = 4;

/** The format that adds a retry policy's failure classes (`retry.on`) to a rule's options. */
export const RETRY_ON_FORMAT = 5;

/** The format that adds the node tags a rule's jobs require (the option `on`) to a rule's options. */
export const PLACEMENT_FORMAT = 6;

/** ztick's format: records of type 0 to 3 only, no extension records. */
export const ZTICK_FORMAT = 1;

/** The first format that reads extension records: no extension record can need less. */
export const FIRST_EXTENSION_FORMAT = 2;

/** True when this tickd reads a record that needs format `needs`. */
export function readsFormat(needs: number): boolean {
  return needs <= FORMAT_VERSION;
}

/** Why this tickd cannot read a record of format `needs` (> FORMAT_VERSION), and what to do. */
export function newerFormatText(needs: number, where: string): string {
  return `a record of tickd format ${needs} ${where}; this tickd reads format ${FORMAT_VERSION} and older: upgrade tickd to read this log`;
}
