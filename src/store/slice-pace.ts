/** About how long one turn of a copy holds the event loop before it lets others run. */
const SLICE_MS = 10;
/** Most rows one statement of a copy reads or deletes at once (rows range from a few bytes to a megabyte). */
const SLICE_MAX_ROWS = 8192;

/** Monotonic time in ms, read anew at each call (`performance.now()`; a test's fake). */
export type Stopwatch = () => number;

const processStopwatch: Stopwatch = () => performance.now();
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Paces a copy by the time it takes, not by a count of rows: a turn of the event loop ends once
 * `sliceMs` have passed since it began, however many rows that was, so a machine that slows down
 * (a load average of 12 on two cores) still lets the loop turn every 10 to 20 ms.
 *
 * A statement takes as many rows (`rows()`) as the rest of the turn fits at the rate the last one
 * was measured at (rows per ms), at most twice as many as the last and at least one; a copy checks
 * `due()` after each row it writes and stops there when the turn is spent. A table starts at one
 * row (`restart`), its rows may be far larger than the last table's. The budget is `sliceMs` less
 * what the work done as the loop is let go took (`beforeTurn`: a file database's commit, and the
 * checkpoint it may run), so that a turn as a whole takes about `sliceMs`.
 */
export class SlicePace {
  private began: number;
  private budget: number;
  /** Rows per ms of the last statement measured; 0 before the first of a table. */
  private rate = 0;
  private last = 1;

  constructor(
    /** The time the pace reads (what a copy measures its statements with too). */
    readonly now: Stopwatch = processStopwatch,
    private readonly sliceMs = SLICE_MS,
    /** Runs as the loop is let go (a file database's commit). */
    private readonly beforeTurn?: () => void,
    /** Runs as the copy takes the loop again (a new transaction; a check that may throw to stop the copy). */
    private readonly afterTurn: () => void = () => {},
  ) {
    this.began = now();
    this.budget = sliceMs;
  }

  /** A new table: one row first. */
  restart(): void {
    this.rate = 0;
    this.last = 1;
  }

  /** Rows the next statement may take. */
  rows(): number {
    if (this.rate === 0) return 1;
    const left = Math.max(0, this.budget - (this.now() - this.began));
    return Math.max(1, Math.min(Math.floor(this.rate * left), this.last * 2, SLICE_MAX_ROWS));
  }

  /** Whether this turn's budget is spent. */
  due(): boolean {
    return this.now() - this.began >= this.budget;
  }

  /** A statement handled `n` rows in `took` ms: the rate of the next. */
  measured(n: number, took: number): void {
    this.last = Math.max(1, n);
    this.rate = n / Math.max(took, 0.001);
  }

  /** `measured`, then the turn once it is due. */
  async after(n: number, took: number): Promise<void> {
    this.measured(n, took);
    if (this.due()) await this.turn();
  }

  /** Lets the event loop turn. */
  async turn(): Promise<void> {
    if (this.beforeTurn) {
      const spent = this.now() - this.began;
      const started = this.now();
      this.beforeTurn();
      const ending = this.now() - started;
      this.budget = Math.min(this.sliceMs, Math.max(this.sliceMs / 10, (this.sliceMs * spent) / Math.max(spent + ending, 0.001)));
    }
    await nextTurn();
    this.afterTurn();
    this.began = this.now();
  }
}
