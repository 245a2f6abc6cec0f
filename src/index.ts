export { createEmulator, buildEmulator, type Emulator, type EmulatorOptions, type EmulatorClock } from "./emulator.js";
export type { Handler, HandlerContext } from "./domain/handlers/types.js";
export type { EmulatorConfig, InlineHandler } from "./config/inline-handlers.js";
export { ConfigError } from "./config/load.js";
export type { Fault, FaultRule, FaultRuleInput } from "./domain/faults.js";
export type { JobStatus, JobView } from "./domain/job.js";
export type { JobEvent, JournalEntry, JournalFilter, WebhookDelivery } from "./domain/observability.js";
export type { SnapshotInfo } from "./snapshots.js";
