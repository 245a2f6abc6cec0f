/** Hono environment of the app: values middleware hands to routes. */
export interface AppEnv {
  Variables: {
    /** Wall time the request arrived, for the request log. */
    startedAt: number;
  };
}
