/**
 * Where the time of a warm call goes, seen from minipod's process (the bench runs minipod in its
 * own process): the moment node hands over each request, the end of its body, and the `writev`
 * of each answer, labelled by the operation of its request (`runsync`,
 * `job-take`, `job-done`). Node's server and sockets are wrapped for the whole process, so this
 * is for a bench run of its own (`bench/flash-warm.ts --steps`); the wrapping adds its own cost.
 */
import http from "node:http";
import net from "node:net";

type Mark = [at: number, label: string];

export class StepMarks {
  private readonly marks: Mark[] = [];
  private readonly state = { recording: false };

  constructor() {
    const { marks, state } = this;
    const emit = http.Server.prototype.emit;
    http.Server.prototype.emit = function (this: http.Server, name: string | symbol, ...args: any[]) {
      if (name === "request") {
        const req = args[0] as http.IncomingMessage & { socket: { stepOp?: string } };
        const op = String(req.url).split("?")[0]!.split("/")[3] ?? "";
        req.socket.stepOp = op;
        if (state.recording) {
          marks.push([performance.now(), `request ${op}`]);
          req.once("end", () => marks.push([performance.now(), `body ${op}`]));
        }
      }
      return emit.call(this, name, ...args);
    } as typeof emit;
    for (const method of ["_writev", "_write"] as const) {
      const write = (net.Socket.prototype as any)[method] as (...a: unknown[]) => unknown;
      (net.Socket.prototype as any)[method] = function (this: { stepOp?: string; _httpMessage?: { req?: { url?: string } } }, ...a: unknown[]) {
        // The answer being written is the socket's current one: with pipelined requests, not
        // necessarily that of the last request read.
        const url = this._httpMessage?.req?.url;
        if (state.recording) marks.push([performance.now(), `answer ${url === undefined ? this.stepOp : (url.split("?")[0]!.split("/")[3] ?? "")}`]);
        return write.apply(this, a);
      };
    }
  }

  start(): void {
    this.marks.length = 0;
    this.state.recording = true;
  }

  stop(): void {
    this.state.recording = false;
  }

  /** The median of each step over the calls recorded (from one `/runsync` request to the next), in ms. */
  medians(): Array<[step: string, ms: number, calls: number]> {
    const steps = new Map<string, number[]>();
    const add = (step: string, ms: number | undefined) => {
      if (ms === undefined || Number.isNaN(ms)) return;
      let list = steps.get(step);
      if (!list) steps.set(step, (list = []));
      list.push(ms);
    };
    let start = -1;
    for (let i = 0; i < this.marks.length; i++) {
      if (this.marks[i]![1] !== "request runsync") continue;
      if (start >= 0) {
        const call = this.marks.slice(start, i);
        const at = (label: string) => call.find(([, l]) => l === label)?.[0] ?? NaN;
        const t0 = call[0]![0];
        const [took, doneIn, answered, doneOut] = [at("answer job-take"), at("request job-done"), at("answer runsync"), at("answer job-done")];
        add("`/runsync` request to the held job-take's answer written", took - t0);
        add("(of which the `/runsync` body read)", at("body runsync") - t0);
        add("the worker: the job-take answer written to its job-done arriving", doneIn - took);
        add("job-done request to the `/runsync` answer written", answered - doneIn);
        add("(of which the job-done body read)", at("body job-done") - doneIn);
        add("`/runsync` request to its answer written, in all", answered - t0);
        add("job-done's answer written, after the `/runsync` answer", doneOut - answered);
        add("the caller: the `/runsync` answer written to its next `/runsync` arriving", this.marks[i]![0] - answered);
      }
      start = i;
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    return [...steps].map(([step, xs]) => [step, median(xs), xs.length]);
  }
}
