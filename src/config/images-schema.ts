import { z } from "zod";

const ImageRuleSchema = z.strictObject({
  image: z
    .string()
    .min(1)
    .describe('An image name pattern: `*` matches any characters ("acme/worker:*", "runpod/flash*"); a name without a tag matches each of its tags'),
  command: z
    .array(z.string().min(1))
    .min(1)
    .describe('The command a worker process of such an endpoint runs, and its arguments ("{python}" stands for the interpreter): ["{python}", "handler.py"]'),
  python: z.string().min(1).optional().describe("The interpreter {python} names; default: the MINIPOD_PYTHON environment variable, else python3 on PATH"),
  env: z.record(z.string(), z.string()).default({}).describe("More environment for the worker process (it wins over the endpoint's template env)"),
  cwd: z.string().min(1).optional().describe("The worker process's working folder, relative to this file; default: minipod's"),
});

/** "An image is a command" (`images`): worker processes for endpoints of an image. */
export const IMAGES_CONFIG = {
  images: z
    .array(ImageRuleSchema)
    .default([])
    .describe(
      'Endpoints whose template image matches one of these run worker processes of its command, started by minipod (on the first job or request, up to workersMax) and stopped when idle past idleTimeout or when the endpoint goes; the first match wins, and minipod\'s own entries come last: runpod/flash:* and runpod/flash-cpu:* run minipod\'s Flash worker ({python} -m minipod.runtimes.flash), runpod/flash-lb:* and runpod/flash-lb-cpu:* its Flash load-balanced worker ({python} -m minipod.runtimes.flash_lb, POST /execute), runpod/queue:* and runpod/queue-gpu:* its SDK 2.x queue worker ({python} -m minipod.runtimes.queue), runpod/api:* and runpod/api-gpu:* its SDK 2.x api server ({python} -m minipod.runtimes.api, on a load-balancing endpoint)',
    ),
} as const;
