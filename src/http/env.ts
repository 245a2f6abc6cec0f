/** Hono environment of the app: values middleware hands to routes. */
export interface AppEnv {
  Variables: {
    /** Set when a fault dropped the connection. */
    dropped: boolean;
    /** The body of the problem+json answered, for the request journal. */
    problemBody: string;
    /**
     * On routes whose answer outlives the handler (an OpenAI event stream): takes the request's
     * queue concurrency slot from the gate, which then leaves it held; the route releases it when
     * the answer ends.
     */
    keepSlot: () => () => void;
    /** Set by the gate on the OpenAI-compatible routes, whose errors take OpenAI's shape. */
    openAi: boolean;
  };
}
