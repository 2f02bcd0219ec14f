// Limits that the side accepting input (TCP and HTTP validation, the configuration) and the
// side storing it (the logfile codec) must agree on, each defined once so that what is
// accepted is exactly what can be stored. (The i64 range of times is lib/domain/time.ts's.)

/** A logfile string has a 2-byte length prefix: at most this many UTF-8 bytes. */
export const MAX_STRING_BYTES = 0xffff;

/** A logfile list has a 2-byte item count: at most this many items. */
export const MAX_LIST_ITEMS = 0xffff;

/** The highest TCP port number (listen addresses, amqp and redis URLs). */
export const MAX_PORT = 0xffff;
