// One protocol command on a short-lived connection, for the rows' setup (RULE SET and the like).
import { LineClient } from '../../test/helpers/client.ts';
import type { Address } from '../../test/helpers/daemon.ts';

/** Sends one command on a short-lived connection; throws unless it is answered OK. */
export async function command(addr: Address, line: string): Promise<void> {
  const client = await LineClient.connect(addr);
  try {
    const reply = await client.request('c1', line, 15_000);
    if (reply.at(-1) !== 'c1 OK') throw new Error(`${line} answered ${reply.join(' / ')}`);
  } finally {
    client.close();
  }
}
