import { RawJson } from "./json-text.js";
import type { JobStore } from "./ports.js";

/**
 * `obj` with its large payload `field` written to the store ahead of the job write that will refer
 * to it (`JobStore.stagePayload`): `obj` itself, at once, when there is nothing to stage (a small
 * payload, the usual case), else a promise of the copy holding the stored payload.
 */
export function withStaged<T extends object>(store: JobStore, obj: T, field: keyof T & string): T | Promise<T> {
  const value = obj[field];
  if (!(value instanceof RawJson) || !store.stagePayload) return obj;
  const staged = store.stagePayload(value);
  return staged === undefined ? obj : staged.then((stored) => ({ ...obj, [field]: stored }));
}

/**
 * Runs `use` with `obj` staged (see `withStaged`): at once when nothing was staged; else once the
 * payload is stored, and a staged payload that `use` did not keep (it threw, or the job had moved
 * on) is dropped. `kept` says whether the job now refers to the payload.
 */
export function afterStaging<T extends object, R>(store: JobStore, obj: T, field: keyof T & string, use: (obj: T) => R, kept: (result: R, payload: unknown) => boolean): R | Promise<R> {
  const staged = withStaged(store, obj, field);
  if (!(staged instanceof Promise)) return use(staged);
  return staged.then((s) => {
    let result: R;
    try {
      result = use(s);
    } catch (e) {
      store.releasePayload?.(s[field]);
      throw e;
    }
    if (!kept(result, s[field])) store.releasePayload?.(s[field]);
    return result;
  });
}
