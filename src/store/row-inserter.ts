import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";

/**
 * Inserts rows into one table several to a statement: `INSERT ... VALUES (...), (...), ...` of
 * `most` rows, then of half as many, down to one, so that n rows take n / most statements and
 * a few more. A row in a statement of eight costs a quarter to a third less than a row on its
 * own (a job row 8.2 -> 6.2 µs, a timeline row 2.9 -> 1.8 µs). Rows keep their order.
 */
export class RowInserter<T> {
  /** By rows per statement: most, most / 2, ..., 1. Prepared when first needed. */
  private readonly statements = new Map<number, Statement<unknown[]>>();
  private readonly head: string;
  private readonly placeholders: string;
  private readonly args: unknown[] = [];

  /**
   * @param columns the columns written, comma-separated
   * @param argsOf a row's values, in the order of the columns
   * @param most rows per statement at most (a power of two)
   */
  constructor(
    private readonly db: Db,
    table: string,
    columns: string,
    private readonly argsOf: (row: T) => readonly unknown[],
    private readonly most: number,
  ) {
    if (!Number.isInteger(Math.log2(most))) throw new Error(`rows per statement must be a power of two, not ${most}`);
    this.head = `INSERT INTO ${table} (${columns}) VALUES`;
    this.placeholders = `(${columns.split(",").map(() => "?").join(", ")})`;
  }

  insert(rows: readonly T[]): void {
    const args = this.args;
    let i = 0;
    for (let size = this.most; size >= 1; size >>= 1) {
      for (; i + size <= rows.length; i += size) {
        args.length = 0;
        for (let j = i; j < i + size; j++) {
          const values = this.argsOf(rows[j]!);
          for (let k = 0; k < values.length; k++) args.push(values[k]);
        }
        this.statement(size).run(args);
      }
    }
    args.length = 0;
  }

  private statement(size: number): Statement<unknown[]> {
    let s = this.statements.get(size);
    if (!s) {
      s = this.db.prepare<unknown[]>(`${this.head} ${Array(size).fill(this.placeholders).join(", ")}`);
      this.statements.set(size, s);
    }
    return s;
  }
}
