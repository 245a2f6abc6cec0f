/**
 * About how many bytes `value` holds as JSON, counted up to `cap` and no further: strings by their
 * length, other scalars and each key by a few bytes. The walk stops as soon as the count passes
 * `cap`, so a large payload costs no more to weigh than a small one (a string's length is known
 * without reading it): each value looked at, an array's items as they are stacked included, adds
 * at least a byte, so at most about `cap` values are looked at whatever the size of `value`.
 */
export function weighs(value: unknown, cap: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") total += v.length + 2;
    else if (v === null || typeof v !== "object") total += 8;
    else if (Array.isArray(v)) {
      total += 2;
      // A separator each, and a scalar item at once (not stacked: a long array of numbers would be).
      for (let i = 0; i < v.length && total <= cap; i++, total++) {
        const item: unknown = v[i];
        if (typeof item === "string") total += item.length + 2;
        else if (item === null || typeof item !== "object") total += 8;
        else stack.push(item);
      }
    } else {
      total += 2;
      for (const k in v) {
        total += k.length + 4;
        stack.push((v as Record<string, unknown>)[k]);
        if (total > cap) break;
      }
    }
    if (total > cap) return total;
  }
  return total;
}
