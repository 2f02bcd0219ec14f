// The shapes every benchmark row shares: a row is a module with a name and a `run(opts)` that
// starts what it needs, measures, cleans up after itself and returns its figures. Rows never
// assert speed: a figure that misses its target is reported, not failed.

/** A bound the issue sets for a figure: `>=` for rates, `<=` for times, lateness and memory. */
export interface Target {
  readonly op: '>=' | '<=';
  readonly value: number;
}

export interface Figure {
  /** What was measured, sizes included ("pipelined SET/s, 1 worker, 4 x 100 000"). */
  readonly label: string;
  /** null when the figure could not be taken (a service is down, the row failed). */
  readonly value: number | null;
  readonly unit: string;
  /** Decimal places shown; 0 unless said. */
  readonly digits?: number;
  readonly target?: Target;
  /** Context printed under the table: side figures, caveats, why a value is missing. */
  readonly note?: string;
}

export interface RowOptions {
  /** The big sizes (rows that have two sizes; see `sized`). */
  readonly full: boolean;
  /** Progress lines for the person watching (stderr); never part of the results. */
  readonly progress: (line: string) => void;
}

export interface Row {
  readonly name: string;
  /** One line for `--list` and the README. */
  readonly title: string;
  /** True when the row has a quick and a full size, chosen by RowOptions.full. */
  readonly sized?: boolean;
  readonly run: (opts: RowOptions) => Promise<Figure[]>;
}

export function meets(target: Target, value: number): boolean {
  return target.op === '>=' ? value >= target.value : value <= target.value;
}
