/** Hono environment of the app: values middleware hands to routes. */
export interface AppEnv {
  Variables: {
    /** Set when a fault dropped the connection. */
    dropped: boolean;
    /** The body of the problem+json answered, for the request journal. */
    problemBody: string;
  };
}
