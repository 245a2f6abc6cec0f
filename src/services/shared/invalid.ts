import { EmulatorError } from "../../domain/errors.js";

/**
 * A body that passed its schema but breaks a rule of the resource (size that shrinks, a field
 * that is immutable, a reference to nothing). Each entry reads like a schema failure:
 * `$.size: ...`, so a client sees one format for every 400.
 */
export function invalidBody(errors: string[]): EmulatorError {
  return new EmulatorError("VALIDATION_FAILED", `the request body is invalid: ${errors.join("; ")}`, { errors });
}

/** A resource that does not exist; `kind` names it as the routes do ("network volume"). */
export function notFound(kind: string, id: string): EmulatorError {
  return new EmulatorError("NOT_FOUND", `${kind} "${id}" not found`);
}

/** `value`, or the 404 of the `kind` with this id where there is none: a model's `get`. */
export function found<T>(value: T | undefined, kind: string, id: string): T {
  if (value === undefined) throw notFound(kind, id);
  return value;
}

/**
 * The refusal to delete what endpoints still use: `what` names it (`template "t1"`), `how` says
 * how they use it (`is used by`), `remedy` what to do first, given the pronoun of the endpoints.
 */
export function inUseBy(users: readonly string[], what: string, how: string, remedy: (them: "it" | "them") => string): EmulatorError {
  const many = users.length > 1;
  return new EmulatorError("INVALID_STATE", `${what} ${how} endpoint${many ? "s" : ""} ${users.join(", ")}; ${remedy(many ? "them" : "it")}`);
}
