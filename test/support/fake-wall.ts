import type { Wall } from "../../src/domain/wall.js";

/** Wall time that moves only when told, for worker-side holds and heartbeat deadlines in tests. */
export class FakeWall implements Wall {
  private t = 1_000_000;
  private readonly timers: Array<{ at: number; seq: number; fn: () => void; live: boolean }> = [];
  private seq = 0;

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: ++this.seq, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  /** The turns of the event loop are the process's: only the time is fake. */
  nextTurn(fn: () => void): void {
    setImmediate(fn);
  }

  /** Live timers. */
  get pending(): number {
    return this.timers.filter((t) => t.live).length;
  }

  /** Moves time by `ms`, running each timer due on the way, in order. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.live && t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.t = due.at;
      due.live = false;
      due.fn();
    }
    this.t = target;
    for (let i = this.timers.length - 1; i >= 0; i--) if (!this.timers[i]!.live) this.timers.splice(i, 1);
  }
}
