import { readdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** Folders an edit of the user's code never is in: tools' caches, environments, dependencies. */
const SKIPPED_DIRS = new Set(["node_modules", ".git", "__pycache__", ".venv", "venv", "dist", "build", ".pytest_cache", ".mypy_cache", ".tox"]);
/** Files no edit of code means: compiled Python, editors' swap and backup files. */
const IGNORED_FILES = /\.py[co]$|\.sw[px]$|~$|^\.#|^4913$/;
/** At most this many folders are watched under one path (one watcher each). */
const DIRS_MAX = 2000;

function folders(root: string, into: string[]): void {
  if (into.length >= DIRS_MAX) return;
  into.push(root);
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.isDirectory() && !SKIPPED_DIRS.has(e.name) && !e.name.startsWith(".")) folders(join(root, e.name), into);
  }
}

/**
 * Watches files, and folders with their subfolders (skipping dependencies, caches and hidden
 * ones), for edits of the files `accept` takes (all by default); calls `onChange` with the absolute paths changed, once per burst of
 * `debounceMs` (150; an editor's save is often several events, or a write to a new file and a rename).
 * Each folder has a watcher of its own, so that no recursive walk of a large tree happens.
 * Returns the function that stops watching.
 */
export function watchFiles(paths: string[], onChange: (files: string[]) => void, o: { accept?: (file: string) => boolean; debounceMs?: number } = {}): () => void {
  const debounceMs = o.debounceMs ?? 150;
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  const add = (dir: string, only?: string) => {
    try {
      const w = watch(dir, (_event, name) => {
        if (!name) return;
        const base = name.toString();
        if (IGNORED_FILES.test(base) || (only !== undefined && base !== only)) return;
        if (o.accept && !o.accept(join(dir, base))) return;
        pending.add(join(dir, base));
        clearTimeout(timer);
        timer = setTimeout(() => {
          const files = [...pending];
          pending.clear();
          onChange(files);
        }, debounceMs);
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
      folders(path, dirs);
      for (const d of dirs) add(d);
    } else add(dirname(path), path.slice(dirname(path).length + 1));
  }
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
