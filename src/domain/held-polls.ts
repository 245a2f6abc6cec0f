import type { WallTime } from "./wall.js";
import type { Leaving } from "./leaving.js";

interface Held<D, T> {
  data: D;
  answer(value: T): void;
}

/**
 * Long polls held open per key (an endpoint's job-take polls, a worker's job-stop polls), answered
 * in the order they arrived: with what `offer` hands them, or with `empty` when their hold ends,
 * their client goes away, or everything is released (reset, shutdown). Holds are in wall time:
 * the processes polling live outside the virtual clock.
 */
export class HeldPolls<K, D, T> {
  private readonly byKey = new Map<K, Held<D, T>[]>();

  constructor(
    private readonly wall: WallTime,
    private readonly empty: () => T,
  ) {}

  /** Holds a poll for up to `holdMs` wall ms. An aborted `signal` (the client left) drops it. */
  wait(key: K, data: D, holdMs: number, signal?: Leaving): Promise<T> {
    return new Promise<T>((resolve) => {
      if (signal?.aborted) return resolve(this.empty());
      let list = this.byKey.get(key);
      if (!list) this.byKey.set(key, (list = []));
      let done = false;
      const held: Held<D, T> = {
        data,
        answer: (value) => {
          if (done) return;
          done = true;
          cancelTimer();
          signal?.removeEventListener("abort", onAbort);
          this.remove(key, held);
          resolve(value);
        },
      };
      const onAbort = () => held.answer(this.empty());
      const cancelTimer = this.wall.after(holdMs, onAbort);
      signal?.addEventListener("abort", onAbort, { once: true });
      list.push(held);
    });
  }

  /** Whether a poll waits under `key`. */
  waiting(key: K): boolean {
    return (this.byKey.get(key)?.length ?? 0) > 0;
  }

  /**
   * Offers the polls of `key`, oldest first, to `give`: a poll is answered with what `give`
   * returns; the first `undefined` (nothing left to give) ends the offer and leaves it held.
   */
  offer(key: K, give: (data: D) => T | undefined): void {
    const list = this.byKey.get(key);
    if (!list) return;
    while (list.length > 0) {
      const held = list[0]!;
      const value = give(held.data);
      if (value === undefined) return;
      held.answer(value);
    }
  }

  /** Answers every poll of `key` (or of every key), or those whose data `which` picks, with `empty`. */
  release(key?: K, which?: (data: D) => boolean): void {
    const keys = key === undefined ? [...this.byKey.keys()] : [key];
    for (const k of keys) {
      for (const held of [...(this.byKey.get(k) ?? [])]) if (!which || which(held.data)) held.answer(this.empty());
    }
  }

  private remove(key: K, held: Held<D, T>): void {
    const list = this.byKey.get(key);
    if (!list) return;
    const i = list.indexOf(held);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byKey.delete(key);
  }
}
