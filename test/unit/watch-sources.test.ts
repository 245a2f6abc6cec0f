import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { watchFiles } from "../../src/cli/file-watch.js";
import { workerSources } from "../../src/cli/watch-sources.js";

describe("the files whose edit restarts a worker under minipod worker --watch", () => {
  const cwd = "/project";
  const restarts = (command: string[], file: string) => workerSources(command, cwd)(`${cwd}/${file}`);

  it("a Python command: its .py sources and the config files, not what it writes", () => {
    for (const command of [["python3", "-u", "handler.py"], ["/usr/bin/python3.11", "handler.py"], ["uv", "run", "handler.py"], [".venv/bin/python", "-m", "app"]]) {
      for (const file of ["handler.py", "lib/model.py", "requirements.txt", "pyproject.toml", "emulator.config.json", ".env"]) expect(restarts(command, file), `${command.join(" ")}: ${file}`).toBe(true);
      for (const file of ["worker.log", "mp.log", "jobs.sqlite", "output.json", "cache.pkl", "index.js", "notes.md"]) expect(restarts(command, file), `${command.join(" ")}: ${file}`).toBe(false);
    }
  });

  it("a Node command: its JavaScript and TypeScript sources and package.json", () => {
    for (const command of [["node", "server.js"], ["npx", "tsx", "server.ts"], ["bun", "run", "server.ts"]]) {
      for (const file of ["server.js", "lib/a.mjs", "lib/b.cjs", "src/c.ts", "package.json", "tsconfig.json"]) expect(restarts(command, file), `${command.join(" ")}: ${file}`).toBe(true);
      for (const file of ["server.log", "handler.py", "db.sqlite3", "out.json"]) expect(restarts(command, file), `${command.join(" ")}: ${file}`).toBe(false);
    }
  });

  it("another command: the sources of either language, and the files it names", () => {
    expect(restarts(["./run.sh"], "run.sh")).toBe(true);
    expect(restarts(["./run.sh"], "handler.py")).toBe(true);
    expect(restarts(["./run.sh"], "server.ts")).toBe(true);
    expect(restarts(["./run.sh"], "run.log")).toBe(false);
  });
});

describe("watchFiles", () => {
  it("reports an edit once; a write that changes nothing (or an event late for a reported write), or one in a virtualenv, not at all", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-watch-files-"));
    writeFileSync(join(dir, "same.py"), "x = 1\n");
    writeFileSync(join(dir, "edited.py"), "y = 1\n");
    mkdirSync(join(dir, "env", "lib"), { recursive: true });
    writeFileSync(join(dir, "env", "pyvenv.cfg"), "home = /usr/bin\n");
    writeFileSync(join(dir, "env", "lib", "site.py"), "installed = 1\n");
    mkdirSync(join(dir, "node_modules"));
    const calls: string[][] = [];
    let seen: () => void = () => {};
    const stop = watchFiles([dir], (files) => {
      calls.push(files.map((f) => f.slice(dir.length + 1)));
      seen();
    }, { debounceMs: 20 });
    try {
      const next = () => new Promise<void>((r) => (seen = r));
      let called = next();
      writeFileSync(join(dir, "same.py"), "x = 1\n");
      writeFileSync(join(dir, "edited.py"), "y = 2\n");
      await called;
      called = next();
      // Rewritten as it was, then a marker edit: only the marker is a change.
      writeFileSync(join(dir, "edited.py"), "y = 2\n");
      writeFileSync(join(dir, "marker.py"), "z = 1\n");
      await called;
      called = next();
      // Nor is anything in a virtualenv, whatever its name, or in the caches of tools.
      writeFileSync(join(dir, "env", "lib", "site.py"), "installed = 2\n");
      writeFileSync(join(dir, "node_modules", "x.js"), "installed = 2\n");
      writeFileSync(join(dir, "marker.py"), "z = 2\n");
      await called;
      expect(calls).toEqual([["edited.py"], ["marker.py"], ["marker.py"]]);
    } finally {
      stop();
    }
  });
});
