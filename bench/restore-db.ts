// A snapshot's restore into a 300 MB database, each way `copyImage` can copy (shadow tables in
// small transactions, or one transaction across the slices), into a --db file and in memory;
// and a snapshot's save of it, in one turn (SQLite's serialisation, `emulator.snapshot`) and by
// turns (`imageOf`, the control API's): the time each takes, the longest turn of the event loop,
// and RSS above where it started. Each case runs in a process of its own, one after another.
// Writes RESULTS-restore.md.
//   npx tsx bench/restore-db.ts [--mb 300]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { migrate, openDb } from "../src/store/db.js";
import { copyImage, imageOf, type CopyWay } from "../src/store/image-copy.js";
import { openSqlite, type Db } from "../src/store/sqlite.js";

const MB = 1024 * 1024;
const PART = 256 * 1024;

/** `mb` queued jobs of 1 MB each, their inputs in four parts (as the store keeps large payloads). */
function image(mb: number): Db {
  const db = openSqlite(":memory:");
  migrate(db);
  const job = db.prepare(
    `INSERT INTO jobs (id, endpoint_id, kind, status, input, execution_timeout_ms, ttl_ms, low_priority, created_at, queued_at, retries, attempt, queue_seq, expires_at, deadline_at, stream_cursor)
     VALUES (?, 'echo', 'run', 'IN_QUEUE', ?, 600000, 86400000, 0, 0, 0, 0, 0, ?, 0, 0, 0)`,
  );
  const part = db.prepare("INSERT INTO payload_parts (name, part, text) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < mb; i++) {
      job.run(`job-${i}`, `#parts:in-${i}:${MB}`, i);
      for (let p = 0; p < MB / PART; p++) part.run(`in-${i}`, p, String.fromCharCode(97 + ((i + p) % 26)).repeat(PART));
    }
  })();
  return db;
}

/** A save: in one turn as `Snapshots.save` makes it (the serialisation opened as a database), or by turns. */
type SaveWay = "save in one turn" | "save by turns";
const SAVES: SaveWay[] = ["save in one turn", "save by turns"];

async function save(db: Db, how: SaveWay): Promise<Db> {
  if (how === "save by turns") return imageOf(db);
  const image = db.serialize();
  // A WAL database's image marked a rollback-journal one, as Snapshots.save does.
  image[18] = image[19] = 1;
  return openSqlite(image);
}

async function runCase(target: "file" | "memory", how: CopyWay | SaveWay, mb: number): Promise<void> {
  const from = image(mb);
  const dir = mkdtempSync(join(tmpdir(), "minipod-bench-restore-"));
  const to = target === "file" ? openDb(join(dir, "state.db")) : openSqlite(":memory:");
  if (target === "memory") migrate(to);
  let saved: Db | undefined;
  try {
    // The live state is as large as the image (a restore of a snapshot of the same size).
    await copyImage(from, to, (SAVES as string[]).includes(how) ? undefined : (how as CopyWay));
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    let longest = 0;
    let turns = 0;
    let last = performance.now();
    let copying = true;
    // The CPU time the process spent in each turn: what of a long turn was the copy's work (or
    // the garbage collector's), and what was waiting for a core on a loaded machine.
    let lastCpu = process.cpuUsage();
    let longestCpu = 0;
    let cpuOfLongest = 0;
    const tick = () => {
      const now = performance.now();
      const used = process.cpuUsage(lastCpu);
      const cpuMs = (used.user + used.system) / 1000;
      lastCpu = process.cpuUsage();
      longestCpu = Math.max(longestCpu, cpuMs);
      if (now - last > longest) cpuOfLongest = cpuMs;
      longest = Math.max(longest, now - last);
      last = now;
      turns++;
      peak = Math.max(peak, process.memoryUsage().rss);
      if (copying) setImmediate(tick);
    };
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    setImmediate(tick);
    if ((SAVES as string[]).includes(how)) saved = await save(to, how as SaveWay);
    else await copyImage(from, to, how as CopyWay);
    copying = false;
    const took = performance.now() - started;
    if (performance.now() - last > longest) {
      const used = process.cpuUsage(lastCpu);
      cpuOfLongest = (used.user + used.system) / 1000;
      longestCpu = Math.max(longestCpu, cpuOfLongest);
    }
    longest = Math.max(longest, performance.now() - last);
    peak = Math.max(peak, process.memoryUsage().rss);
    const cpu = process.cpuUsage(cpuBefore);
    process.stdout.write(JSON.stringify({ target, how, took, longest, cpuOfLongest, longestCpu, turns, rssUp: (peak - rssBefore) / MB, cpu: (cpu.user + cpu.system) / 1000 }) + "\n");
  } finally {
    saved?.close();
    to.close();
    from.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The event loop's longest turn over `ms` with nothing running: what the machine's load alone costs. */
async function idle(ms: number): Promise<void> {
  let longest = 0;
  let turns = 0;
  const started = performance.now();
  let last = started;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      turns++;
      if (now - started < ms) setImmediate(tick);
      else resolve();
    };
    setImmediate(tick);
  });
  process.stdout.write(JSON.stringify({ target: "none", how: "nothing running", took: ms, longest, cpuOfLongest: 0, longestCpu: 0, turns, rssUp: 0, cpu: 0 }) + "\n");
}

interface Result {
  target: string;
  how: string;
  took: number;
  longest: number;
  cpuOfLongest: number;
  longestCpu: number;
  turns: number;
  rssUp: number;
  cpu: number;
}

const args = process.argv.slice(2);
const mb = Number(args[args.indexOf("--mb") + 1] ?? 300) || 300;
if (args[0] === "--case" && args[1] === "idle") {
  await idle(2000);
} else if (args[0] === "--case") {
  await runCase(args[1] as "file" | "memory", args[2] as CopyWay | SaveWay, mb);
} else {
  const rounds = Number(args[args.indexOf("--rounds") + 1] ?? 2) || 2;
  const load = loadavg()[0]!;
  const results: Result[] = [];
  const runOne = (...caseArgs: string[]) => {
    const run = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--case", ...caseArgs, "--mb", String(mb)], { encoding: "utf8", timeout: 300_000 });
    if (run.status !== 0) throw new Error(`case ${caseArgs.join(" ")} failed: ${run.stderr}`);
    const line = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Result;
    results.push(line);
    console.log(line);
  };
  for (let r = 0; r < rounds; r++) {
    runOne("idle");
    for (const target of ["file", "memory"] as const) {
      for (const how of ["one transaction", "shadows", ...SAVES] as const) runOne(target, how);
    }
  }
  const row = (r: Result) => `| ${r.target === "file" ? "`--db` file" : "in memory"} | ${r.how} | ${(r.took / 1000).toFixed(2)} s | ${r.longest.toFixed(0)} ms (${r.cpuOfLongest.toFixed(0)} ms) | ${r.longestCpu.toFixed(0)} ms | ${r.turns} | ${(r.cpu / 1000).toFixed(2)} s | ${r.rssUp.toFixed(0)} MB |`;
  const idles = results.filter((r) => r.target === "none");
  const isSave = (r: Result) => (SAVES as string[]).includes(r.how);
  const copies = results.filter((r) => r.target !== "none");
  const out = `# minipod snapshot restore of a large database

Written by \`npx tsx bench/restore-db.ts\` (bench/restore-db.ts). Do not edit by hand.

- date: ${new Date().toISOString()}
- node ${process.version}; ${mb} queued jobs of 1 MB (their inputs in parts), restored over a state of the same size, and saved; each case in a process of its own; load average at the start ${load.toFixed(1)}, at the end ${loadavg()[0]!.toFixed(1)} on 2 cores

The copy of the snapshot's rows into the live database (\`copyImage\`, what a restore and \`--import\` run), each way:
"one transaction" deletes the old rows and inserts the new ones by turns of about 10 ms, all in one transaction;
"shadows" fills shadow tables, each turn its own transaction, and swaps them in with one short transaction.
The longest turn is the longest time between two turns of the event loop while the copy ran (on a loaded machine it
includes the time the process waited for a core: with nothing running, in a process of its own, the longest turn over
2 s was ${idles.map((r) => `${r.longest.toFixed(0)} ms`).join(", ")}, one per round), with the CPU time the process spent in it; the most
CPU in a turn is the longest work of the copy (and of the garbage collector) between two turns, whatever the machine's load; CPU is
the process's user and system time meanwhile; RSS is the peak above where it was as the copy began.

| database | way | took | longest turn (its CPU) | most CPU in a turn | turns | CPU | RSS peak above start |
|---|---|---:|---:|---:|---:|---:|---:|
${copies.filter((r) => !isSave(r)).map(row).join("\n")}

A snapshot's save of that database, each way: "save in one turn" is SQLite's serialisation opened
as the snapshot's database (\`emulator.snapshot(name)\`); "save by turns" copies it into a new
in-memory database by turns of about 10 ms (\`imageOf\`: the control API, \`emulator.saveSnapshot(name)\`).
RSS is the peak above where it was as the save began, the snapshot made included.

| database | way | took | longest turn (its CPU) | most CPU in a turn | turns | CPU | RSS peak above start |
|---|---|---:|---:|---:|---:|---:|---:|
${copies.filter(isSave).map(row).join("\n")}
`;
  writeFileSync(join(fileURLToPath(new URL(".", import.meta.url)), "RESULTS-restore.md"), out);
}
