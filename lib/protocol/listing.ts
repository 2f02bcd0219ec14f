// One streamed QUERY, LISTRULES or SCHEDULE LIST on a TCP connection (lib/domain/page.ts): the primary answers
// a page at a time, and this holds the text of the page not yet written, the cursor of the
// next one, and whether a page request is out. The session decides when to ask for the next
// page (once this listing is at the head of the connection's output and the socket has taken
// what was written), so a client that does not read costs one page at most.
import type { ListCommand, Reply } from '../domain/command.ts';
import { internal } from '../errors.ts';
import { formatPageLines, formatReply } from './format.ts';

const DONE: Reply = { ok: true, kind: 'done' };

export class Listing {
  readonly rid: string;
  readonly instruction: string;
  readonly startedNs: bigint;
  private cmd: ListCommand;
  /** Formatted lines received and not yet written. */
  text = '';
  /** The terminal line (OK or ERROR) is in `text` or already written. */
  done = false;
  /** A page request is out to the primary. */
  inFlight = false;
  success = true;

  constructor(rid: string, instruction: string, startedNs: bigint, cmd: ListCommand) {
    this.rid = rid;
    this.instruction = instruction;
    this.startedNs = startedNs;
    this.cmd = cmd;
  }

  /** The command for the next page. */
  nextRequest(): ListCommand {
    this.inFlight = true;
    return this.cmd;
  }

  /** Takes a page (or an error) from the primary. */
  accept(reply: Reply): void {
    this.inFlight = false;
    if (!reply.ok || (reply.kind !== 'jobs' && reply.kind !== 'rules' && reply.kind !== 'schedules')) {
      // An error mid-listing ends it: the lines already written stay, the client sees ERROR.
      this.text += formatReply(this.rid, reply.ok ? internal() : reply);
      this.done = true;
      this.success = false;
      return;
    }
    this.text += formatPageLines(this.rid, reply);
    if (reply.next === null) {
      this.text += formatReply(this.rid, DONE);
      this.done = true;
    } else {
      this.cmd = { ...this.cmd, cursor: reply.next };
    }
  }

  /** The text to write now (emptied). */
  take(): string {
    const text = this.text;
    this.text = '';
    return text;
  }
}
