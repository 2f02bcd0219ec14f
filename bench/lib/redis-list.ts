// The local Redis the redis benchmarks push to, and the check after a run: how many items the
// runner left in the list, which is then deleted so runs do not pile up.
import { createClient } from 'redis';

export const REDIS_URL = 'redis://127.0.0.1:6379/0';

/** LLEN `key`, then DEL it, on a short-lived admin connection. */
export async function listLengthThenDelete(key: string): Promise<number> {
  const admin = createClient({ url: REDIS_URL });
  admin.on('error', () => {});
  await admin.connect();
  try {
    const length = await admin.lLen(key);
    await admin.del(key);
    return length;
  } finally {
    admin.destroy();
  }
}
