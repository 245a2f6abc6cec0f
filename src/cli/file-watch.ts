import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** Folders an edit of the user's code never is in: tools' caches, environments, dependencies. */
const SKIPPED_DIRS = new Set(["node_modules", ".git", "__pycache__", ".venv", "venv", "site-packages", "__pypackages__", "dist", "build", ".pytest_cache", ".mypy_cache", ".tox"]);
/** Files no edit of code means: compiled Python, editors' swap and backup files. */
const IGNORED_FILES = /\.py[co]$|\.sw[px]$|~$|^\.#|^4913$/;
/** At most this many folders are watched under one path (one watcher each). */
const DIRS_MAX = 2000;

/** The folders under `root` to watch, and the files in them (to know their state before any edit). */
function folders(root: string, into: string[], files: string[]): void {
  if (into.length >= DIRS_MAX) return;
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return;
  }
  // A virtualenv, whatever its name (`python -m venv env`): packages installed, not code edited.
  if (into.length > 0 && entries.some((e) => e.name === "pyvenv.cfg")) return;
  into.push(root);
  for (const e of entries) {
    if (e.isDirectory() && !SKIPPED_DIRS.has(e.name) && !e.name.startsWith(".")) folders(join(root, e.name), into, files);
    else if (e.isFile()) files.push(join(root, e.name));
  }
}

/** Files larger than this are told apart by size and time of change, not content. */
const HASHED_MAX = 1024 * 1024;

/** What a file is now, as far as an edit goes: its content's hash (or size and time of change); "" when it is gone. */
function signature(file: string): string {
  try {
    const s = statSync(file);
    if (!s.isFile() || s.size > HASHED_MAX) return `${s.size}:${s.mtimeMs}`;
    return createHash("sha1").update(readFileSync(file)).digest("hex");
  } catch {
    return "";
  }
}

/**
 * Watches files, and folders with their subfolders (skipping dependencies, caches and hidden
 * ones), for edits of the files `accept` takes (all by default); calls `onChange` with the absolute
 * paths changed, once per burst of `debounceMs` (150; an editor's save is often several events, or
 * a write to a new file and a rename). A file whose content is what it was at the last call (an
 * event that came late for a write already reported, a save of nothing) is no change: one edit is
 * one call. Each folder has a watcher of its own, so that no recursive walk of
 * a large tree happens. Returns the function that stops watching.
 */
export function watchFiles(paths: string[], onChange: (files: string[]) => void, o: { accept?: (file: string) => boolean; debounceMs?: number } = {}): () => void {
  const debounceMs = o.debounceMs ?? 150;
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  const known = new Map<string, string>();
  const accepts = (file: string) => !IGNORED_FILES.test(basename(file)) && (!o.accept || o.accept(file));
  const flush = () => {
    const files = [...pending].filter((f) => {
      const now = signature(f);
      if (known.get(f) === now) return false;
      known.set(f, now);
      return true;
    });
    pending.clear();
    if (files.length > 0) onChange(files);
  };
  const add = (dir: string, only?: string) => {
    try {
      const w = watch(dir, (_event, name) => {
        if (!name) return;
        const base = name.toString();
        if ((only !== undefined && base !== only) || !accepts(join(dir, base))) return;
        pending.add(join(dir, base));
        clearTimeout(timer);
        timer = setTimeout(flush, debounceMs);
      });
      w.on("error", () => {
        // The folder was removed: nothing more to watch there.
      });
      watchers.push(w);
    } catch {
      // Not there (yet): nothing to watch.
    }
  };
  for (const path of paths.map((p) => resolve(p))) {
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      // a file not written yet: its folder is watched for it
    }
    if (isDir) {
      const dirs: string[] = [];
      const files: string[] = [];
      folders(path, dirs, files);
      for (const f of files) if (accepts(f)) known.set(f, signature(f));
      for (const d of dirs) add(d);
    } else {
      known.set(path, signature(path));
      add(dirname(path), basename(path));
    }
  }
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
