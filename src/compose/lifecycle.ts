/**
 * Start, reset and snapshot restore, written once: each is an ordered list of phases, and each
 * part of the emulator (the job engine, then every service in the list's order) takes part in the
 * phases it has a hook for. The three differ only where this table says so:
 *
 * | phase      | start | reset | restore | what it does                                                |
 * |------------|:-----:|:-----:|:-------:|-------------------------------------------------------------|
 * | `quiesce`  |       |   x   |    x    | stop what runs: workers, held waits, timers                 |
 * | (image)    |       |       |    x    | the snapshot's rows replace the database's                  |
 * | `clear`    |       |   x   |         | forget every job, endpoint, resource, record and log        |
 * | `restored` |       |       |    x    | drop what was read before the image; clock to its time      |
 * | `seed`     |   x   |   x   |         | write what the config declares                              |
 * | `resume`   |   x   |   x   |    x    | rebuild from the database: queue, lost jobs, workers, timers |
 *
 * So a reset leaves the state of a fresh start on the same config, at the clock's current time
 * (virtual time does not go back); a restore leaves the state the snapshot held, at its time, with
 * nothing of the config seeded over it. On purpose, both keep the fault rules armed through the
 * control API only on restore (a restore replays a scene under the same faults; a reset goes back
 * to the config's rules), and neither keeps pod or worker logs (they are not in the database).
 */

export interface Participant {
  readonly name: string;
  quiesce?(cause: string): void;
  clear?(): void;
  restored?(at: number): void;
  seed?(): void | Promise<void>;
  resume?(): void | Promise<void>;
}

export type Phase = "quiesce" | "clear" | "restored" | "seed" | "resume";

export const PHASES = {
  start: ["seed", "resume"],
  reset: ["quiesce", "clear", "seed", "resume"],
  restore: ["quiesce", "restored", "resume"],
} as const satisfies Record<string, readonly Phase[]>;

export type Transition = keyof typeof PHASES;

/**
 * Runs the phases of `transition` over `parts`, in order; `afterQuiesce` runs after `quiesce` (a
 * restore loads its image there). When it fails (the database left as it was), what was stopped
 * resumes on the state as it is, and the failure is thrown.
 */
export async function runPhases(
  transition: Transition,
  parts: readonly Participant[],
  o: { cause?: string; at?: number; afterQuiesce?: () => void | Promise<void> } = {},
): Promise<void> {
  for (const phase of PHASES[transition]) {
    for (const p of parts) {
      if (phase === "quiesce") p.quiesce?.(o.cause ?? transition);
      else if (phase === "clear") p.clear?.();
      else if (phase === "restored") p.restored?.(o.at!);
      else if (phase === "seed") await p.seed?.();
      else await p.resume?.();
    }
    if (phase === "quiesce" && o.afterQuiesce) {
      try {
        await o.afterQuiesce();
      } catch (e) {
        for (const p of parts) await p.resume?.();
        throw e;
      }
    }
  }
}
