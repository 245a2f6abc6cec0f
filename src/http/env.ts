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
    /**
     * Set by a route that passed its request on to another of the app's routes (`forwardedRequest`:
     * a call of a deployed Flash app to its endpoint): the journal keeps the one entry of the
     * request passed on, under this request's path, and none of this one.
     */
    forwarded: boolean;
  };
}

/** The Hono environment of a request a route passes on (see `forwarded`): the path the journal shows for it. */
interface ForwardedEnv {
  journalPath?: string;
}

/** The environment to pass `c.env` on with to `app.fetch`, for a request standing for one with path `journalPath`. */
export const forwardedEnv = (env: unknown, journalPath: string): ForwardedEnv => ({ ...(env as object | undefined), journalPath });

/** The path the journal shows for a request made with `env`: the one it stands for, if passed on. */
export const journalPathOf = (env: unknown): string | undefined => (env as ForwardedEnv | undefined)?.journalPath;
