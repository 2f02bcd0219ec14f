// Buffered writing to stdout: many small pieces joined into few writes, and a reader that went
// away (`tickd ctl job ls | head`, EPIPE) ends the output quietly instead of crashing.
export class Sink {
  private parts: string[] = [];
  private size = 0;
  private readonly out: NodeJS.WritableStream;
  broken = false;

  constructor(out: NodeJS.WritableStream) {
    this.out = out;
    out.on('error', () => { this.broken = true; });
  }

  write(text: string): void {
    if (this.broken || text === '') return;
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= 64 * 1024) this.push();
  }

  /** Whether the stream is backed up (its reader is slower than we write). */
  get backedUp(): boolean {
    return (this.out as NodeJS.WritableStream & { writableNeedDrain?: boolean }).writableNeedDrain === true;
  }

  /** Writes what is buffered; resolves once the stream has taken it. */
  async flush(): Promise<void> {
    this.push();
    if (this.broken || !this.backedUp) return;
    await new Promise<void>((resolve) => {
      const done = () => { this.out.off('drain', done); this.out.off('error', done); this.out.off('close', done); resolve(); };
      this.out.on('drain', done);
      this.out.on('error', done);
      this.out.on('close', done);
    });
  }

  private push(): void {
    if (this.parts.length === 0) return;
    const data = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = [];
    this.size = 0;
    if (!this.broken) this.out.write(data);
  }
}
