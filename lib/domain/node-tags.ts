// Node tags (issue 40; tickd(8) CLUSTER MODE "Where jobs run"): a node declares tags
// (`--node-tags`, or `node_tags` in tickd.toml's [cluster]); a rule may require some (`on`). A
// job of such a rule runs only on a node that has every tag it requires. One reader for the
// three places a list of tags comes from, so that they refuse the same things with the same words.

export const MAX_TAGS = 16;
/** A tag, as a JSON Schema pattern too (the OpenAPI document's `on`). */
export const TAG_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$';
const TAG = new RegExp(TAG_PATTERN);
export const TAG_FORM = '1 to 64 characters of letters, digits, "_", ".", ":" and "-", starting with a letter or digit';

export type TagsResult = { readonly tags: readonly string[] } | { readonly error: string };

/** A list of tags (a JSON array, or the parts of a comma-separated text), or why it is refused. */
export function readTags(values: unknown): TagsResult {
  if (!Array.isArray(values)) return { error: 'must be a list of tags' };
  if (values.length > MAX_TAGS) return { error: `at most ${MAX_TAGS} tags` };
  const seen = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string' || !TAG.test(v)) return { error: `a tag is ${TAG_FORM}, got ${JSON.stringify(v)?.slice(0, 80)}` };
    if (seen.has(v)) return { error: `"${v}" is given twice` };
    seen.add(v);
  }
  return { tags: [...values] as string[] };
}

/** A comma-separated list of tags (`--node-tags`, RULE SET's `on=`); empty text: no tags. */
export function parseTagText(text: string): TagsResult {
  return readTags(text === '' ? [] : text.split(','));
}

/** Whether a node with `nodeTags` may run a job whose rule requires `wanted` (every one of them). */
export function hasTags(nodeTags: readonly string[], wanted: readonly string[] | undefined): boolean {
  if (wanted === undefined) return true;
  for (const t of wanted) if (!nodeTags.includes(t)) return false;
  return true;
}
