import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { idParams, routeHead, bodyRequest } from "../shared/rest.js";
import { ERROR_RESPONSES, problem, json } from "../../http/schemas.js";
import { PodV1Schema, TAG, toPodV1 } from "./v1.js";
import { EmulatorError } from "../../domain/errors.js";
import { podLog } from "../../domain/logbook.js";
import { podActions } from "./record.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { LOG_STREAM_DESCRIPTION, LogQuery, logStream, logStreamResponse } from "../shared/log-stream.js";
import { PodActionV2Schema, PodV2Schema, toPodV2 } from "./v2.js";

const errors = { ...ERROR_RESPONSES, 404: problem("No pod with this id") };
const route = routeHead(TAG);

const action = (verb: "start" | "stop" | "reset" | "restart", operationId: string, summary: string, description: string) =>
  createRoute({
    ...route("post", `/v1/pods/{podId}/${verb}`, operationId, summary),
    description,
    request: { params: idParams("podId", "xedezhzb9la3ye") },
    responses: { 200: json(PodV1Schema, "The pod after the action"), ...errors },
  });

const startPod = action("start", "StartPod", "Start or resume a pod", "EXITED → RUNNING (lastStartedAt moves to now, billing resumes); a running pod is answered as it is.");
const stopPod = action("stop", "StopPod", "Stop a pod", "RUNNING → EXITED (billing stops); a stopped pod is answered as it is. Refused with 400 while the pod is locked.");
const resetPod = action(
  "reset",
  "ResetPod",
  "Reset a pod",
  "Starts the container again from a clean container disk: RUNNING, lastStartedAt moves to now. Refused with 400 while the pod is locked.",
);
const restartPod = action(
  "restart",
  "RestartPod",
  "Restart a pod",
  "Restarts a running pod's container: lastStartedAt moves to now. Refused with 400 on a stopped pod (start it) or a locked one.",
);

const params = idParams("id", "xedezhzb9la3ye");

const actionRoute = createRoute({
  ...route("post", "/v2/pods/{id}/action", "podAction", "Start, stop, restart or terminate a pod"),
  description:
    "`start` an EXITED pod, `stop` or `restart` a RUNNING one, `terminate` either (204, as DELETE). An action the pod's status does not allow (see its `actions`) is refused with 409; a locked pod refuses stop (400).",
  ...bodyRequest(PodActionV2Schema, { params }),
  responses: { 200: json(PodV2Schema, "The pod after the action"), 204: { description: "Terminated; no body" }, 409: problem("The action is not valid in the pod's status"), ...errors },
});

const logsRoute = createRoute({
  ...route("get", "/v2/pods/{id}/logs", "getPodLogs", "Stream a pod's log"),
  description: `${LOG_STREAM_DESCRIPTION} A pod's log is its lifecycle (system): created, started, stopped, restarted, reset, changed, terminated; no container runs, so it has no container lines.`,
  request: { params, query: LogQuery },
  responses: { 200: logStreamResponse("The pod's log"), ...errors },
});

/** The pod routes beyond the five of the resource: the v2 action and log, the v1 actions. */
export function podActionRoutes(core: Pick<ViewContext, "pods" | "logs" | "notifier" | "clock" | "clusters" | "endpoints" | "networkVolumes" | "templates">, router: OpenAPIHono<AppEnv>): void {
  const { pods, logs } = core;

  router.openapi(actionRoute, (c) => {
    const id = c.req.valid("param").id;
    const { action } = c.req.valid("json");
    const pod = pods.get(id);
    const allowed = podActions(pod);
    if (!(allowed as string[]).includes(action)) {
      throw new EmulatorError("CONFLICT", `pod "${id}" is ${pod.desiredStatus}: ${action} is not valid now; the pod allows ${allowed.join(", ") || "nothing"}`);
    }
    if (action === "terminate") {
      pods.delete(id);
      return c.body(null, 204);
    }
    const next = action === "start" ? pods.start(id) : action === "stop" ? pods.stop(id) : pods.restart(id);
    return c.json(toPodV2(core, next), 200);
  });

  router.openapi(logsRoute, (c) => {
    const id = c.req.valid("param").id;
    pods.get(id);
    const key = podLog(id);
    return logStream(c, core.notifier, { lines: () => logs.lines(key), ended: logs.hasEnded(key), subscribe: (fn) => logs.subscribe(key, fn) }, c.req.valid("query"));
  });
  router.openapi(startPod, (c) => c.json(toPodV1(core, pods.start(c.req.valid("param").podId)), 200));
  router.openapi(stopPod, (c) => c.json(toPodV1(core, pods.stop(c.req.valid("param").podId)), 200));
  router.openapi(resetPod, (c) => c.json(toPodV1(core, pods.reset(c.req.valid("param").podId)), 200));
  router.openapi(restartPod, (c) => c.json(toPodV1(core, pods.restart(c.req.valid("param").podId)), 200));
}
