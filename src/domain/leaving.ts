/**
 * What a held request (a `/runsync`, a job-take, a job-stop poll) reads of its client leaving:
 * whether it has left, and a listener called once when it does. Hono's request signal (an
 * AbortSignal) is one; a fast entry gives a lighter one of its own, made for every held request
 * (see `http/raw-exchange.ts`).
 */
export interface Leaving {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}
