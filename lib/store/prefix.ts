// Prefix filtering shared by the job and rule listings: "starts with `prefix` and, unless
// `scope` is '', with `scope`" folds into a single startsWith test per record.

/**
 * The one prefix equivalent to both conditions: the longer of the two when one extends the
 * other ('' extends nothing and is extended by everything), else null: nothing can match.
 */
export function narrowest(prefix: string, scope: string): string | null {
  if (prefix.startsWith(scope)) return prefix;
  if (scope.startsWith(prefix)) return scope;
  return null;
}
