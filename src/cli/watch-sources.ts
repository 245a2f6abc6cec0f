import { basename, extname, relative, resolve } from "node:path";
import { watchFiles } from "./file-watch.js";

const PYTHON = [".py"];
const NODE = [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"];

/**
 * Files that configure a worker rather than being its code: an edit of one changes what runs
 * (dependencies, settings, minipod's config). Lock files are left out: an install rewrites them
 * with the packages it installs, which the worker does not see until it is started again anyway.
 */
const CONFIG_FILES = new Set([
  "emulator.config.json",
  "requirements.txt",
  "requirements-dev.txt",
  "pyproject.toml",
  "setup.cfg",
  "Pipfile",
  "package.json",
  "tsconfig.json",
  ".env",
]);

/** The language of a command, by its program (`python3.11`, `uv run`, `node`, `tsx`) or its script (`handler.py`). */
function languageOf(command: readonly string[]): "python" | "node" | undefined {
  const words = command.map((w) => basename(w).toLowerCase());
  if (words.some((w) => /^(python|pypy)[\d.]*(\.exe)?$/.test(w) || ["uv", "poetry", "pipenv", "pdm", "hatch", "uvicorn", "gunicorn", "fastapi"].includes(w) || extname(w) === ".py")) return "python";
  if (words.some((w) => /^(node|nodejs|tsx|ts-node|bun|deno|npm|npx|pnpm|yarn)(\.exe)?$/.test(w) || NODE.includes(extname(w)))) return "node";
  return undefined;
}

/**
 * Which changed files restart a worker process under `minipod worker --watch`: the source files
 * of the command's language (`.py` for a Python command, `.js`/`.ts`/`.mjs`/`.cjs`... for Node;
 * both when the command is neither, e.g. a shell script), the configuration files of those
 * ecosystems (requirements.txt, pyproject.toml, package.json, emulator.config.json...), and any
 * file the command names (`./run.sh`). Everything else a worker and the tools around it write in
 * the folder (its logs, databases, outputs, caches) is not code, and restarting on it made a
 * worker that logs beside its handler restart in a loop.
 */
export function workerSources(command: readonly string[], cwd = process.cwd()): (file: string) => boolean {
  const language = languageOf(command);
  const extensions = new Set(language === "python" ? PYTHON : language === "node" ? NODE : [...PYTHON, ...NODE]);
  const named = new Set(command.map((w) => resolve(cwd, w)));
  return (file) => extensions.has(extname(file)) || CONFIG_FILES.has(basename(file)) || named.has(file);
}

/**
 * `minipod worker --watch`: watches `paths` for edits of the worker's sources (`workerSources`)
 * and calls `restart` once per edit, having said which files changed. Returns the function that
 * stops watching.
 */
export function watchWorkerSources(paths: string[], command: readonly string[], restart: (why: string) => void): () => void {
  const unwatch = watchFiles(
    paths,
    (files) => {
      const names = files.map((f) => relative(process.cwd(), f) || f).join(", ");
      process.stderr.write(`minipod worker: ${names} changed: restarting the worker(s)\n`);
      restart(`${names} changed`);
    },
    { accept: workerSources(command) },
  );
  process.stderr.write(`minipod worker: watching ${paths.join(", ")} for edits of the worker's sources and config files\n`);
  return unwatch;
}
