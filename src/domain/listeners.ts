/** A set of callbacks told about each event, for services whose changes others follow. */
export class Listeners<E> {
  private readonly fns = new Set<(e: E) => void>();

  /** Calls `fn` on every event until the returned function is called. */
  subscribe(fn: (e: E) => void): () => void {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  }

  emit(e: E): void {
    for (const fn of this.fns) fn(e);
  }
}
