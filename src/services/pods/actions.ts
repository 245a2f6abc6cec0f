import { createRoute } from "@hono/zod-openapi";
import { idParams } from "../shared/rest.js";
import { ERROR_RESPONSES, problem, json } from "../../http/schemas.js";
import { PodSchema, TAG } from "./schemas.js";

const errors = { ...ERROR_RESPONSES, 404: problem("No pod with this id") };

const action = (verb: "start" | "stop" | "reset" | "restart", operationId: string, summary: string, description: string) =>
  createRoute({
    method: "post",
    path: `/v1/pods/{podId}/${verb}`,
    operationId,
    tags: [TAG],
    summary,
    description,
    request: { params: idParams("podId", "xedezhzb9la3ye") },
    responses: { 200: json(PodSchema, "The pod after the action"), ...errors },
  });

export const startPod = action("start", "StartPod", "Start or resume a pod", "EXITED → RUNNING (lastStartedAt moves to now, billing resumes); a running pod is answered as it is.");
export const stopPod = action("stop", "StopPod", "Stop a pod", "RUNNING → EXITED (billing stops); a stopped pod is answered as it is. Refused with 400 while the pod is locked.");
export const resetPod = action(
  "reset",
  "ResetPod",
  "Reset a pod",
  "Starts the container again from a clean container disk: RUNNING, lastStartedAt moves to now. Refused with 400 while the pod is locked.",
);
export const restartPod = action(
  "restart",
  "RestartPod",
  "Restart a pod",
  "Restarts a running pod's container: lastStartedAt moves to now. Refused with 400 on a stopped pod (start it) or a locked one.",
);
