import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { VIRTUAL_TIME_MAX_MS } from "../../../domain/bounds.js";
import { CLOCK_MODES } from "../../../domain/clock.js";
import { clientSleep } from "../../../domain/client-sleep.js";
import { EmulatorError } from "../../../domain/errors.js";
import type { Core } from "../../core.js";
import { jsonBody } from "../../body.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, int, NO_PARAMETERS_BODY, NO_PARAMETERS_LIMIT, ok } from "../../schemas.js";
import { faultRoutes } from "./faults.js";
import { observeRoutes } from "./observe.js";
import { snapshotRoutes } from "./snapshots.js";
import { waitRoutes } from "./wait.js";

const TAG = "Emulator control";
const CONTROL_BODY_LIMIT = 1024 * 1024;
/** The longest client sleep: a day of virtual time (a poll's sleep is seconds). */
const CLIENT_SLEEP_MAX_MS = 86_400_000;

const ClockSchema = z
  .object({
    now: z.int().openapi({ description: "Virtual now, epoch ms" }),
    iso: z.string().openapi({ description: "Virtual now, ISO 8601" }),
    mode: z
      .enum(CLOCK_MODES)
      .openapi({
        description:
          "real: follows the wall; manual: moves only when advanced; auto: follows the wall, and skips to the next timer whenever something waits on virtual time and nothing runs on real time",
      }),
    speed: z.number().openapi({ description: "Real and auto modes: virtual ms per wall ms while time follows the wall" }),
    pendingTimers: z.int().openapi({
      description:
        "Timers on the virtual clock that will act when due (job deadlines, held requests, handler sleeps, cold starts, idle scale-downs, webhook retries...); a running worker's idle timer, kept armed through its job but inert while it runs, is not counted",
    }),
    waiting: z.int().openapi({ description: "Requests and waits held on virtual time now (a /runsync, an OpenAI stream, waitForJob...)" }),
    realWork: z.boolean().openapi({ description: "Whether something runs on real time now (a handler computing, a job on a worker process...): the auto clock does not skip meanwhile" }),
  })
  .openapi("Clock");


const getClock = createRoute({
  method: "get",
  path: "/_emulator/clock",
  operationId: "getClock",
  tags: [TAG],
  summary: "The virtual clock",
  responses: ok(ClockSchema, "Now and mode"),
});

const advanceClock = createRoute({
  method: "post",
  path: "/_emulator/clock/advance",
  operationId: "advanceClock",
  tags: [TAG],
  summary: "Move virtual time forward",
  description:
    "Moves time by exactly `ms`, fires every timer due on the way in time order, and answers after the work they started has settled. Works in every mode (on the real and auto clocks it skips ahead).",
  middleware: [jsonBody(CONTROL_BODY_LIMIT)] as const,
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({ ms: int().min(0).max(VIRTUAL_TIME_MAX_MS).openapi({ example: 60000, description: `Virtual ms; time cannot pass ${new Date(VIRTUAL_TIME_MAX_MS).toISOString()}` }) })
            .openapi("Advance"),
        },
      },
    },
  },
  responses: { ...ok(ClockSchema, "The clock after the move"), 400: ERROR_RESPONSES[400] },
});

const sleepOnClock = createRoute({
  method: "post",
  path: "/_emulator/clock/sleep",
  operationId: "sleepOnClock",
  tags: [TAG],
  summary: "A client's sleep, on the virtual clock",
  description:
    "Answers once `ms` of virtual time has passed: on the auto clock at once when nothing runs on real time (time skips ahead, firing the timers on the way in order), in step with the work while something does; on the real clock in wall time; on the manual clock it moves time itself, timer by timer, waiting for real work. What a test client's `sleep` calls, so that its polling waits on minipod's clock.",
  middleware: [jsonBody(CONTROL_BODY_LIMIT)] as const,
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({ ms: int().min(0).max(CLIENT_SLEEP_MAX_MS).openapi({ example: 1000, description: "Virtual ms to sleep" }) })
            .strict()
            .openapi("ClientSleep"),
        },
      },
    },
  },
  responses: { ...ok(ClockSchema, "The clock once the sleep has passed"), 400: ERROR_RESPONSES[400] },
});

const reset = createRoute({
  method: "post",
  path: "/_emulator/reset",
  operationId: "reset",
  tags: [TAG],
  summary: "Empty every job and return to the configured state",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: { body: NO_PARAMETERS_BODY },
  responses: ok(z.object({ status: z.literal("reset") }), "Reset done"),
});

/** The emulator's own control API under `/_emulator`. */
export function controlRoutes(
  core: Pick<Core, "clock" | "log" | "reset" | "scheduler"> &
    Parameters<typeof faultRoutes>[0] &
    Parameters<typeof observeRoutes>[0] &
    Parameters<typeof snapshotRoutes>[0] &
    Parameters<typeof waitRoutes>[0],
  router: OpenAPIHono<AppEnv>,
): void {
  const { clock } = core;
  const view = () => ({
    now: clock.now(),
    iso: new Date(clock.now()).toISOString(),
    mode: clock.mode,
    speed: clock.speed,
    pendingTimers: clock.pending() - core.scheduler.keptIdleTimers(),
    waiting: clock.activity.waiterCount,
    realWork: clock.activity.busy(),
  });

  router.openapi(getClock, (c) => c.json(view(), 200));

  router.openapi(advanceClock, async (c) => {
    const { ms } = c.req.valid("json");
    // The clock refuses, having changed nothing, a move past the end of virtual time.
    await clock.advance(ms).catch((e: unknown) => {
      if (!(e instanceof RangeError)) throw e;
      const error = `$.ms: expected at most ${clock.remaining()}: virtual time ends at ${new Date(VIRTUAL_TIME_MAX_MS).toISOString()} and it is ${new Date(clock.now()).toISOString()}`;
      throw new EmulatorError("VALIDATION_FAILED", `the request body is invalid: ${error}`, { errors: [error] });
    });
    core.log.debug(`clock advanced by ${ms} ms to ${new Date(clock.now()).toISOString()}`);
    return c.json(view(), 200);
  });

  router.openapi(sleepOnClock, async (c) => {
    await clientSleep(clock, c.req.valid("json").ms);
    return c.json(view(), 200);
  });

  router.openapi(reset, async (c) => {
    await core.reset();
    return c.json({ status: "reset" as const }, 200);
  });

  faultRoutes(core, router);
  observeRoutes(core, router);
  snapshotRoutes(core, router);
  waitRoutes(core, router);
}
