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

/** The `data:` values of an event stream, in order (multi-line data joined with newlines). */
export function dataOf(text: string): string[] {
  return text
    .split(/\n\n/)
    .filter((event) => event.trim() !== "")
    .map((event) =>
      event
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n"),
    );
}

/** The JSON chunks of an OpenAI event stream (everything but `[DONE]`). */
export const chunksOf = (text: string): Array<Record<string, any>> =>
  dataOf(text)
    .filter((d) => d !== "[DONE]")
    .map((d) => JSON.parse(d) as Record<string, any>);
