/** Edit distance between two short names: insertions, deletions, substitutions and swaps of two neighbours ("ecoh" is one from "echo"). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The valid name closest to `given`, if one is close enough to be a typo of it. */
export function nearest(given: string, valid: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = given.toLowerCase();
  for (const name of valid) {
    const d = distance(lower, name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/** "unknown <what> "x": did you mean "y"? Valid: a, b, c" — the message for a name that is not one of `valid`. */
export function unknownName(what: string, given: string, valid: readonly string[]): string {
  const near = nearest(given, valid);
  return `unknown ${what} "${given}"${near ? `: did you mean "${near}"?` : ""} Valid: ${valid.join(", ")}`;
}
