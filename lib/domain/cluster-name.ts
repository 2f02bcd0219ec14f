// A cluster's name (`--cluster-name`) names its stream, a token of every subject and the
// prefix of its key-value buckets, so it is held to what all three accept.
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** null when `name` can name a cluster (a stream, a subject token, a KV bucket prefix). */
export function clusterNameError(name: string): string | null {
  return NAME.test(name) ? null : 'must be 1 to 64 characters of letters, digits, "_" and "-"';
}
