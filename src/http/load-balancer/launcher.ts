import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { EmulatorError } from "../../domain/errors.js";
import { CLOSING_CAUSE, RESTARTING_CAUSE } from "../../domain/notifier.js";
import type { LbLauncher } from "../../domain/load-balancer/types.js";
import type { Core } from "../core.js";
import { eventStream, pumpEvents } from "../event-stream.js";
import type { AppEnv } from "../env.js";
import { ERROR_RESPONSES, problem } from "../schemas.js";

const TAG = "Emulator control";
/** Wall ms between `tick` events: a reader whose client gives up on a silent body stays connected. */
export const LAUNCHER_TICK_MS = 5000;
/** The notifier id this stream watches to hear the emulator closing (no job id has a slash). */
const RELEASE_WATCH_ID = "/_emulator/load-balancers/launcher";

const launcherRoute = createRoute({
  method: "get",
  path: "/_emulator/load-balancers/{endpoint_id}/launcher",
  operationId: "loadBalancerLauncher",
  tags: [TAG],
  summary: "Start and stop a load-balancing endpoint's worker processes as its pool scales (Server-Sent Events)",
  description: [
    'While this stream is open, its reader starts and stops the worker processes of a load-balancing endpoint with `"handler": "external"` as the endpoint\'s pool asks (workersMin..workersMax on REQUEST_COUNT, an idle one stopped after idleTimeout of virtual time): what `minipod worker` does by default on such an endpoint.',
    "",
    "- `start`: data `{}`: start one process and register it (`POST /_emulator/load-balancers/{endpoint_id}/workers`); it joins once its health says 200.",
    "- `stop`: data `{workerId}`: the pool let this worker go (idle); stop its process.",
    `- \`tick\`: every ${LAUNCHER_TICK_MS / 1000} s of wall time, data \`{}\`.`,
    "- `restarting`: data `{}`, the last event: the emulator stops to start again on the same port at once (`minipod --watch` on a config edit); the processes it routed to go with it, and the restarted one's stream asks for new ones.",
    "",
    "The stream ends when the emulator closes; the pool stops scaling processes when it ends. One reader at a time (409 while another scales the endpoint).",
  ].join("\n"),
  request: { params: z.object({ endpoint_id: z.string().openapi({ param: { name: "endpoint_id", in: "path" } }) }) },
  responses: {
    200: { description: "The event stream", content: { "text/event-stream": { schema: z.string() } } },
    404: ERROR_RESPONSES[404],
    409: problem("Another reader (or `emulator.scaleWorkers`) starts this endpoint's processes already"),
  },
});

type LauncherEvent = { event: "start"; data: Record<string, never> } | { event: "stop"; data: { workerId: string } };

/**
 * `GET /_emulator/load-balancers/{endpoint_id}/launcher`: the pool's launcher (`LbLauncher`) for a
 * launcher in another process, such as `minipod worker`: the pool's own scaling rule decides, and
 * each `start` and `stop` it asks for becomes an event of this stream.
 */
export function loadBalancerLauncherRoute(core: Pick<Core, "loadBalancers" | "notifier">, app: OpenAPIHono<AppEnv>): void {
  const lb = core.loadBalancers;
  app.openapi(launcherRoute, (c) => {
    const { endpoint_id: endpointId } = c.req.valid("param");
    if (lb.handlerOf(endpointId)?.kind !== "process") {
      throw new EmulatorError("NOT_FOUND", `endpoint "${endpointId}" is not a load-balancing endpoint served by worker processes; give it "type": "LOAD_BALANCER" and "handler": "external"`);
    }
    if (lb.launcherOf(endpointId))
      throw new EmulatorError(
        "CONFLICT",
        `the worker processes of endpoint "${endpointId}" are started and stopped by another launcher already (a minipod worker, or emulator.scaleWorkers); stop it first`,
      );
    const events: LauncherEvent[] = [];
    return eventStream(c, (stream) => {
      let launcher: LbLauncher | undefined;
      return pumpEvents(stream, {
        listen(wake, end) {
          const queue = (e: LauncherEvent) => {
            events.push(e);
            wake();
          };
          launcher = { start: () => queue({ event: "start", data: {} }), stop: (workerId) => queue({ event: "stop", data: { workerId } }) };
          const unwatch = core.notifier.watch(RELEASE_WATCH_ID, (change) => {
            // A restart says so: the launcher waits for minipod to be back, and follows it again.
            if (change.cause === RESTARTING_CAUSE) end({ event: "restarting", data: "{}" });
            else if (change.cause === CLOSING_CAUSE) end();
          });
          // Set now: the pool asks at once for the workers it wants (workersMin, requests waiting).
          lb.setLauncher(endpointId, launcher);
          return () => {
            unwatch();
            if (lb.launcherOf(endpointId) === launcher) lb.setLauncher(endpointId, undefined);
          };
        },
        take: () => events.splice(0).map((e) => ({ event: e.event, data: JSON.stringify(e.data) })),
        tick: () => ({ event: "tick", data: "{}" }),
        tickMs: LAUNCHER_TICK_MS,
      });
    });
  });
}
