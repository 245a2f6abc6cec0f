/** One Server-Sent Event: its id and its data, parsed as JSON. */
export interface SseEvent {
  id: string | undefined;
  data: any;
}

/**
 * Reads events from an event-stream response as they come: `next(n)` resolves with the next `n`
 * events, `rest()` with every event until the stream ends; `close()` cancels it.
 */
export function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  const queue: SseEvent[] = [];
  const parse = () => {
    for (let i = buffer.indexOf("\n\n"); i !== -1; i = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) id = line.slice(3).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) queue.push({ id, data: JSON.parse(data.join("\n")) });
    }
  };
  const pull = async () => {
    const { done, value } = await reader.read();
    if (done) ended = true;
    else buffer += decoder.decode(value, { stream: true });
    parse();
  };
  return {
    async next(n = 1): Promise<SseEvent[]> {
      while (queue.length < n && !ended) await pull();
      if (queue.length < n) throw new Error(`the stream ended after ${queue.length} of ${n} events`);
      return queue.splice(0, n);
    },
    async rest(): Promise<SseEvent[]> {
      while (!ended) await pull();
      return queue.splice(0);
    },
    close: () => reader.cancel().catch(() => {}),
  };
}
