/** One Server-Sent Event: its id and its data (multi-line data joined with newlines). */
export interface RawSseEvent {
  id: string | undefined;
  data: string;
}

/** One Server-Sent Event with its data parsed as JSON. */
export interface SseEvent {
  id: string | undefined;
  data: any;
}

/** The events of complete event-stream text, in order. */
export function eventsOf(text: string): RawSseEvent[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) id = line.slice(3).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      return { id, data: data.join("\n") };
    });
}

/** The `data:` values of an event stream, in order. */
export const dataOf = (text: string): string[] => eventsOf(text).map((e) => e.data);

/** The JSON chunks of an OpenAI event stream (everything but `[DONE]`). */
export const chunksOf = (text: string): Array<Record<string, any>> =>
  dataOf(text)
    .filter((d) => d !== "[DONE]")
    .map((d) => JSON.parse(d) as Record<string, any>);

/** Reads a Server-Sent Events answer piece by piece, as a client sees it arrive. */
export function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let ended = false;
  return {
    /** Waits for the next piece of the body; undefined once it ended. */
    async next(): Promise<string | undefined> {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        return undefined;
      }
      const piece = decoder.decode(value, { stream: true });
      text += piece;
      return piece;
    },
    /** Everything until the end. */
    async rest(): Promise<string> {
      while (!ended && (await this.next()) !== undefined);
      return text;
    },
    /** Every `data:` value received so far. */
    data: () => dataOf(text),
    cancel: () => reader.cancel(),
    get text() {
      return text;
    },
  };
}

/**
 * Reads JSON events from an event-stream answer as they come: `next(n)` resolves with the next
 * `n` events, `rest()` with every event until the stream ends; `close()` cancels it.
 */
export function sseEventReader(res: Response) {
  const pieces = sseReader(res);
  let taken = 0;
  /** The complete events received and not taken yet (a block is complete once its blank line came). */
  const waiting = (): SseEvent[] => {
    const complete = pieces.text.slice(0, pieces.text.lastIndexOf("\n\n") + 2);
    return eventsOf(complete)
      .filter((e) => e.data !== "")
      .slice(taken)
      .map((e) => ({ id: e.id, data: JSON.parse(e.data) }));
  };
  return {
    async next(n = 1): Promise<SseEvent[]> {
      let ready = waiting();
      while (ready.length < n && (await pieces.next()) !== undefined) ready = waiting();
      if (ready.length < n) throw new Error(`the stream ended after ${ready.length} of ${n} events`);
      taken += n;
      return ready.slice(0, n);
    },
    async rest(): Promise<SseEvent[]> {
      await pieces.rest();
      const ready = waiting();
      taken += ready.length;
      return ready;
    },
    close: () => pieces.cancel().catch(() => {}),
  };
}
