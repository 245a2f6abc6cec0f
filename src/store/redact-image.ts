import { isSecretName, redact, REDACTED, shownUrl } from "../domain/redact.js";
import { columns, keyColumns, tables } from "./image-copy.js";
import { SlicePace } from "./slice-pace.js";
import type { Db } from "./sqlite.js";

/**
 * Runs `step` over a table's rows by ranges of rowids sized to the turn (store/slice-pace.ts), the
 * event loop free between turns: `range` is SQL to add to its WHERE, with `args` its parameters
 * (`rowid > ? AND rowid <= ?`), or `1` (no parameters) for a WITHOUT ROWID table, done in one
 * statement.
 */
async function inSlices(db: Db, t: string, step: (range: string, args: number[]) => void): Promise<void> {
  if (keyColumns(db, t)[0] !== "rowid") return step("1", []);
  const end = db.prepare(`SELECT max(rowid) FROM (SELECT rowid FROM "${t}" WHERE rowid > ? ORDER BY rowid LIMIT ?)`).pluck(true);
  const pace = new SlicePace();
  for (let from = 0; ; ) {
    const n = pace.rows();
    const to = end.get(from, n) as number | null;
    if (to === null) return;
    const started = pace.now();
    step("rowid > ? AND rowid <= ?", [from, to]);
    await pace.after(n, pace.now() - started);
    from = to;
  }
}

/**
 * Overwrites every secret of `db` (a private copy of the state, for an export) by slices of about
 * `REDACT_STEP_MS`, the event loop free between them: secret-named columns, secret-named keys of
 * the resources' JSON documents at any depth, passwords in URLs, and webhook URLs as shown.
 */
export async function redactSecrets(db: Db): Promise<void> {
  const all = tables(db);
  for (const t of all) {
    for (const c of columns(db, t).filter(isSecretName)) {
      await inSlices(db, t, (range, args) => db.prepare(`UPDATE "${t}" SET "${c}" = ? WHERE "${c}" IS NOT NULL AND ${range}`).run(REDACTED, ...args));
    }
  }
  // Resources are JSON documents (a registry auth's password, an env's token): every secret-named
  // key at any depth, and the password of any URL with user info, is redacted in each.
  if (all.includes("documents")) {
    const set = db.prepare(`UPDATE documents SET data = ? WHERE kind = ? AND id = ?`);
    await inSlices(db, "documents", (range, args) => {
      for (const d of db.prepare(`SELECT kind, id, data FROM documents WHERE ${range}`).all(...args) as { kind: string; id: string; data: string }[]) {
        const data = JSON.stringify(redact(JSON.parse(d.data)));
        if (data !== d.data) set.run(data, d.kind, d.id);
      }
    });
  }
  if (all.includes("jobs")) {
    const set = db.prepare(`UPDATE jobs SET webhook = ? WHERE id = ?`);
    await inSlices(db, "jobs", (range, args) => {
      db.prepare(`UPDATE jobs SET s3_config = json_set(s3_config, '$.accessSecret', '[redacted]') WHERE s3_config IS NOT NULL AND ${range}`).run(...args);
      // Webhook URLs as shown: secret-named query values (a receiver's token) and passwords
      // (refused since; a database of an earlier release may hold some). An import calls them as they are.
      const rows = db.prepare(`SELECT id, webhook FROM jobs WHERE (webhook LIKE '%?%' OR webhook LIKE '%://%:%@%') AND ${range}`).all(...args) as { id: string; webhook: string }[];
      for (const j of rows) {
        const shown = shownUrl(j.webhook);
        if (shown !== j.webhook) set.run(shown, j.id);
      }
    });
  }
}
