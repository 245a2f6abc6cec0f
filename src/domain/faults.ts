import { FAULT_RULES_LIVE_MAX, FAULT_RULES_SPENT_KEPT } from "./bounds.js";
import { EmulatorError } from "./errors.js";
import { seededRandom } from "./random.js";

/** What goes wrong. `http`, `latency` and `reset` act on requests; the rest on jobs and workers. */
export type Fault =
  | { type: "http"; status: number; retryAfter?: number | undefined; message?: string | undefined }
  | { type: "latency"; ms: number }
  | { type: "reset" }
  | { type: "worker-crash"; atMs?: number | undefined }
  | { type: "timeout" }
  | { type: "no-workers" };

export type FaultType = Fault["type"];
export const REQUEST_FAULTS: ReadonlySet<FaultType> = new Set(["http", "latency", "reset"]);
export const JOB_FAULTS: ReadonlySet<FaultType> = new Set(["worker-crash", "timeout"]);

/** A rule as given (config, control API, programmatic API). */
export interface FaultRuleInput {
  /** Only this endpoint (queue and worker routes, and its jobs). */
  endpoint?: string | undefined;
  /** Only this operation: `run`, `runsync`, `status`, ..., a worker route or a REST collection (`FAULT_OPERATIONS`). */
  operation?: string | undefined;
  fault: Fault;
  /** Fires for this many matches, then is spent (default: unlimited). */
  times?: number | undefined;
  /** Chance that a match fires, drawn from the seeded PRNG (default 1). */
  probability?: number | undefined;
  /** Lets this many matches through before the rule starts firing (default 0). */
  after?: number | undefined;
}

export interface FaultRule extends FaultRuleInput {
  id: string;
  /** Matches seen so far. */
  matched: number;
  /** Times it fired. */
  fired: number;
  /** True once `times` is used up; a spent rule stays listed but never fires again. */
  spent: boolean;
}

export interface FaultTarget {
  endpoint: string | undefined;
  operation: string | undefined;
}

/**
 * The fault rules held in the emulator. A match is counted per rule; `after`, `probability` and
 * `times` decide whether it fires. Decisions draw from one PRNG seeded at start, so the same seed
 * and the same sequence of requests give the same faults.
 */
export class FaultRules {
  private rules: FaultRule[] = [];
  private next = 1;
  private random: () => number;

  constructor(
    private readonly seed: number,
    private readonly onChange: () => void = () => {},
  ) {
    this.random = seededRandom(seed);
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  add(input: FaultRuleInput): FaultRule {
    validateRule(input);
    if (this.rules.length >= FAULT_RULES_LIVE_MAX) this.dropSpent(FAULT_RULES_SPENT_KEPT - 1);
    if (this.rules.filter((r) => !r.spent).length >= FAULT_RULES_LIVE_MAX) {
      throw new EmulatorError(
        "CONFLICT",
        `there are already ${FAULT_RULES_LIVE_MAX} live fault rules, the most minipod holds at once (each service request is matched against every one); remove some (DELETE /_emulator/faults/{id}, or DELETE /_emulator/faults for all) before adding another`,
      );
    }
    const rule: FaultRule = { ...input, id: `fault-${this.next++}`, matched: 0, fired: 0, spent: false };
    this.rules.push(rule);
    this.onChange();
    return { ...rule };
  }

  /** Drops the oldest spent rules until at most `keep` are listed. */
  private dropSpent(keep: number): void {
    let spent = this.rules.reduce((n, r) => n + (r.spent ? 1 : 0), 0);
    if (spent <= keep) return;
    this.rules = this.rules.filter((r) => !r.spent || spent-- <= keep);
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    if (this.rules.length !== before) this.onChange();
    return this.rules.length !== before;
  }

  clear(): number {
    const n = this.rules.length;
    this.rules = [];
    this.onChange();
    return n;
  }

  /** Back to the start: no rules, the PRNG re-seeded, ids from 1. */
  reset(initial: FaultRuleInput[]): void {
    this.rules = [];
    this.next = 1;
    this.random = seededRandom(this.seed);
    for (const r of initial) this.add(r);
    this.onChange();
  }

  /** Whether a rule of one of `types` could still fire. */
  armed(types: ReadonlySet<FaultType>): boolean {
    return this.rules.some((r) => !r.spent && types.has(r.fault.type));
  }

  /** The first rule of one of `types` that fires for this target, counting the match. */
  fire(types: ReadonlySet<FaultType>, target: FaultTarget): FaultRule | undefined {
    for (const rule of this.rules) {
      if (rule.spent || !types.has(rule.fault.type) || !matches(rule, target)) continue;
      rule.matched++;
      if (rule.matched <= (rule.after ?? 0)) continue;
      if (rule.probability !== undefined && rule.probability < 1 && this.random() >= rule.probability) continue;
      rule.fired++;
      if (rule.times !== undefined && rule.fired >= rule.times) rule.spent = true;
      this.onChange();
      return { ...rule };
    }
    return undefined;
  }

  /** Whether a live `no-workers` rule covers the endpoint (a state, not a per-match event). */
  blocksWorkers(endpoint: string): boolean {
    return this.rules.some((r) => !r.spent && r.fault.type === "no-workers" && (r.endpoint === undefined || r.endpoint === endpoint));
  }
}

function matches(rule: FaultRule, t: FaultTarget): boolean {
  if (rule.endpoint !== undefined && rule.endpoint !== t.endpoint) return false;
  if (rule.operation !== undefined && rule.operation !== t.operation) return false;
  return true;
}

function validateRule(r: FaultRuleInput): void {
  const bad = (m: string) => new EmulatorError("BAD_REQUEST", `invalid fault rule: ${m}`);
  if (r.times !== undefined && (!Number.isInteger(r.times) || r.times < 1)) throw bad("times must be an integer >= 1");
  if (r.after !== undefined && (!Number.isInteger(r.after) || r.after < 0)) throw bad("after must be an integer >= 0");
  if (r.probability !== undefined && !(r.probability >= 0 && r.probability <= 1)) throw bad("probability must be between 0 and 1");
  if (r.fault.type === "http" && !(Number.isInteger(r.fault.status) && r.fault.status >= 400 && r.fault.status <= 599)) throw bad("http fault status must be 400..599");
  if (JOB_FAULTS.has(r.fault.type) && r.operation !== undefined) throw bad(`${r.fault.type} acts on jobs; give an endpoint, not an operation`);
}
