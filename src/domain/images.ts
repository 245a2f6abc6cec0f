/**
 * "An image is a command": the config's `images` map an image name (a pattern) to the command a
 * worker process of an endpoint of that image runs, so that an endpoint made through REST,
 * GraphQL or an SDK with that image gets worker processes started by minipod. minipod's own
 * entries, after the config's, cover the service's runtime images with minipod's own runtimes.
 */
export interface ImageRule {
  /** An image name pattern: `*` matches any characters; without a tag, any tag matches. */
  image: string;
  /** The command and its arguments; `{python}` stands for the interpreter. */
  command: string[];
  /** The interpreter `{python}` names; default: MINIPOD_PYTHON, else python3 on PATH. */
  python?: string | undefined;
  /** More environment for the worker process. */
  env: Record<string, string>;
  /** Its working folder; default: minipod's. */
  cwd?: string | undefined;
  /** One of minipod's own entries: runs a runtime of minipod's Python package (python/src on PYTHONPATH). */
  builtin?: boolean;
}

/** The worker of runpod-flash's queue images (`runpod/flash`, `runpod/flash-cpu`): minipod.runtimes.flash. */
const FLASH_QUEUE_WORKER = ["{python}", "-m", "minipod.runtimes.flash"];

/** The worker of the SDK 2.x's queue images (`runpod/queue`, `runpod/queue-gpu`), live mode: minipod.runtimes.queue. */
const SDK_QUEUE_WORKER = ["{python}", "-m", "minipod.runtimes.queue"];

/** The worker of the SDK 2.x's api images (`runpod/api`, `runpod/api-gpu`), live mode: minipod.runtimes.api, an HTTP server. */
const SDK_API_WORKER = ["{python}", "-m", "minipod.runtimes.api"];

/** The worker of runpod-flash's load-balanced images (`runpod/flash-lb`, `runpod/flash-lb-cpu`), live mode: minipod.runtimes.flash_lb. */
const FLASH_LB_WORKER = ["{python}", "-m", "minipod.runtimes.flash_lb"];

/** minipod's own entries: the service's runtime images whose workers minipod implements. */
export const BUILTIN_IMAGES: readonly ImageRule[] = [
  { image: "runpod/flash:*", command: FLASH_QUEUE_WORKER, env: {}, builtin: true },
  { image: "runpod/flash-cpu:*", command: FLASH_QUEUE_WORKER, env: {}, builtin: true },
  { image: "runpod/flash-lb:*", command: FLASH_LB_WORKER, env: {}, builtin: true },
  { image: "runpod/flash-lb-cpu:*", command: FLASH_LB_WORKER, env: {}, builtin: true },
  { image: "runpod/queue:*", command: SDK_QUEUE_WORKER, env: {}, builtin: true },
  { image: "runpod/queue-gpu:*", command: SDK_QUEUE_WORKER, env: {}, builtin: true },
  { image: "runpod/api:*", command: SDK_API_WORKER, env: {}, builtin: true },
  { image: "runpod/api-gpu:*", command: SDK_API_WORKER, env: {}, builtin: true },
];

const patterns = new Map<string, RegExp>();

function patternOf(image: string): RegExp {
  let re = patterns.get(image);
  if (!re) {
    const body = image.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
    // A name without a tag ("acme/worker") matches each of its tags too.
    const anyTag = !image.slice(image.lastIndexOf("/") + 1).includes(":") && !image.endsWith("*");
    re = new RegExp(`^${body}${anyTag ? "(:.*)?" : ""}$`);
    patterns.set(image, re);
  }
  return re;
}

/** The first rule whose pattern matches the image name (the config's before minipod's own), if any. */
export function imageRuleFor(rules: readonly ImageRule[], imageName: string | undefined): ImageRule | undefined {
  if (!imageName) return undefined;
  return rules.find((r) => patternOf(r.image).test(imageName));
}

/** The command of a rule, its interpreter put in. */
export function imageCommand(rule: ImageRule, defaultPython: string): string[] {
  const python = rule.python ?? defaultPython;
  return rule.command.map((arg) => arg.replaceAll("{python}", python));
}
