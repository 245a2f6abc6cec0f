import { z } from "zod";
import {
  HELD_JOB_BYTES_LIMIT,
  HELD_JOB_IDLE_MS_DEFAULT,
  HELD_JOB_IDLE_MS_LIMIT,
  HELD_JOB_ROWS_DEFAULT,
  HELD_JOB_ROWS_LIMIT,
  JOURNAL_BODY_BYTES_DEFAULT,
  JOURNAL_BODY_BYTES_LIMIT,
  JOURNAL_MAX_ENTRIES_LIMIT,
  MEMORY_DATABASE_BYTES_DEFAULT,
  REQUEST_BODY_BYTES_DEFAULT,
  REQUEST_BODY_BYTES_LIMIT,
  REQUEST_BODY_BYTES_MIN,
  MEMORY_DATABASE_BYTES_LIMIT,
  MEMORY_DATABASE_BYTES_MIN,
} from "../domain/bounds.js";

/**
 * The seed of fault injection, webhooks, the request journal and memory bounds (`seed`, `webhooks`,
 * `journal`, `memory`); the fault rules, which name the services' operations, are in schema.ts.
 */
export const OBSERVE_CONFIG = {
  seed: z.int().default(1).describe("Seed of the PRNG behind fault probabilities: the same seed replays the same faults"),
  webhooks: z
    .strictObject({ timeoutMs: z.int().min(1).max(60_000).default(5000).describe("Wall-clock ms a webhook receiver has to answer") })
    .default({ timeoutMs: 5000 }),
  journal: z
    .strictObject({
      maxEntries: z.int().min(0).max(JOURNAL_MAX_ENTRIES_LIMIT).default(10_000).describe("Requests kept in the journal (0 turns it off)"),
      maxBodyBytes: z
        .int()
        .min(0)
        .max(JOURNAL_BODY_BYTES_LIMIT)
        .default(JOURNAL_BODY_BYTES_DEFAULT)
        .describe("Bytes of request bodies the journal keeps in all; past it, an entry keeps a note of its body's size instead (each body is kept only up to 64 KiB)"),
    })
    .default({ maxEntries: 10_000, maxBodyBytes: JOURNAL_BODY_BYTES_DEFAULT }),
  memory: z
    .strictObject({
      databaseBytes: z
        .int()
        .min(MEMORY_DATABASE_BYTES_MIN)
        .max(MEMORY_DATABASE_BYTES_LIMIT)
        .default(MEMORY_DATABASE_BYTES_DEFAULT)
        .describe(
          "Bytes the in-memory database (no --db) may hold: jobs within result retention with their inputs and outputs, stream chunks, the journal; past it, a write is answered 507 as a full disk's is (with --db, the disk is the bound)",
        ),
      requestBodyBytes: z
        .int()
        .min(REQUEST_BODY_BYTES_MIN)
        .max(REQUEST_BODY_BYTES_LIMIT)
        .default(REQUEST_BODY_BYTES_DEFAULT)
        .describe(
          "Bytes of request bodies being read and handled at once, all requests together (each is also bounded by its route's limit, 20 MB at most); past it, a body is refused with 503 and Retry-After while it arrives",
        ),
      heldJobRows: z
        .int()
        .min(0)
        .max(HELD_JOB_ROWS_LIMIT)
        .default(HELD_JOB_ROWS_DEFAULT)
        .describe(
          "Rows of new jobs the in-memory database (no --db) keeps in memory before writing them to SQLite: a job's row is written when something reads jobs with SQL (lists, GraphQL, metrics, snapshots, exports), past this or heldJobBytes (the oldest, to make room), or once minipod is idle; a job whose retention ends first is never written. 0 writes each job at the end of its turn, as with --db",
        ),
      heldJobBytes: z
        .int()
        .min(0)
        .max(HELD_JOB_BYTES_LIMIT)
        .optional()
        .describe("Bytes of the jobs heldJobRows keeps in memory (about 570 a small job), their payloads counted; past it, the oldest are written to SQLite. Default: an eighth of node's heap limit"),
      heldJobIdleMs: z
        .int()
        .min(1)
        .max(HELD_JOB_IDLE_MS_LIMIT)
        .default(HELD_JOB_IDLE_MS_DEFAULT)
        .describe("Real milliseconds without a new job written after which the rows heldJobRows keeps are written to SQLite (minipod is idle)"),
    })
    .default({
      databaseBytes: MEMORY_DATABASE_BYTES_DEFAULT,
      requestBodyBytes: REQUEST_BODY_BYTES_DEFAULT,
      heldJobRows: HELD_JOB_ROWS_DEFAULT,
      heldJobIdleMs: HELD_JOB_IDLE_MS_DEFAULT,
    })
    .describe("minipod's own memory bounds (see the README's Memory bounds)"),
} as const;
