/** Edit distance (insertions, deletions, substitutions) between two short names. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
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
