import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";

/**
 * Inserts rows into one table several to a statement: `INSERT ... VALUES (...), (...), ...` of
 * `most` rows, then of half as many, down to one, so that n rows take n / most statements and
 * a few more. A row in a statement of eight costs a quarter to a third less than a row on its
 * own (a job row 8.2 -> 6.2 µs, a timeline row 2.9 -> 1.8 µs). Rows keep their order.
 *
 * Each row's values are written straight into the statement's parameters (`fill`), an array of
 * its size made once: no array per row, and none grown again for every statement.
 */
export class RowInserter<T> {
  /** By rows per statement: most, most / 2, ..., 1, with its parameters. Prepared when first needed. */
  private readonly statements = new Map<number, { statement: Statement<unknown[]>; args: unknown[] }>();
  private readonly head: string;
  private readonly placeholders: string;
  private readonly width: number;

  /**
   * @param columns the columns written, comma-separated
   * @param fill writes a row's values, in the order of the columns, into `out` from `at`
   * @param most rows per statement at most (a power of two)
   */
  constructor(
    private readonly db: Db,
    table: string,
    columns: string,
    private readonly fill: (row: T, out: unknown[], at: number) => void,
    private readonly most: number,
  ) {
    if (!Number.isInteger(Math.log2(most))) throw new Error(`rows per statement must be a power of two, not ${most}`);
    this.head = `INSERT INTO ${table} (${columns}) VALUES`;
    this.width = columns.split(",").length;
    this.placeholders = `(${Array(this.width).fill("?").join(", ")})`;
  }

  insert(rows: readonly T[]): void {
    let i = 0;
    for (let size = this.most; size >= 1; size >>= 1) {
      for (; i + size <= rows.length; i += size) {
        const { statement, args } = this.statement(size);
        for (let j = 0; j < size; j++) this.fill(rows[i + j]!, args, j * this.width);
        try {
          statement.run(args);
        } finally {
          // What the rows held (texts, bodies) is not kept alive by the parameters until the next statement.
          args.fill(null);
        }
      }
    }
  }

  private statement(size: number): { statement: Statement<unknown[]>; args: unknown[] } {
    let s = this.statements.get(size);
    if (!s) {
      s = { statement: this.db.prepare<unknown[]>(`${this.head} ${Array(size).fill(this.placeholders).join(", ")}`), args: new Array<unknown>(size * this.width).fill(null) };
      this.statements.set(size, s);
    }
    return s;
  }
}
