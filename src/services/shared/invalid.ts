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
