// An agent env's task lines typed against the program that reads them: a stdlib program may ship
// the JSON Schema of its task lines beside it (contracts/agent-command.ts, stdlibTaskSchema), and
// `arl check` then reports the first line that does not fit, at its file line, rather than every
// episode of that task failing at run time.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

const compiled = new Map<string, ValidateFunction>();

function validator(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = new Ajv2020({ allErrors: false, strict: false }).compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/** ajv's error as a phrase about the task line. */
function phrase(error: ErrorObject): string {
  const at = error.instancePath === "" ? "the line" : `'${error.instancePath.slice(1).replaceAll("/", ".")}'`;
  if (error.keyword === "required") return `the line has no '${String(error.params.missingProperty)}'`;
  if (error.keyword === "additionalProperties")
    return `'${String(error.params.additionalProperty)}' is not a field the program reads`;
  return `${at} ${error.message ?? "does not fit"}`;
}

/** The first task line (its object and file line) that does not fit `schema`, and why; undefined when all fit. */
export function taskLineProblem(
  schema: Record<string, unknown>,
  objects: readonly unknown[],
  lines: readonly number[],
): { line: number; problem: string } | undefined {
  const validate = validator(schema);
  for (const [i, object] of objects.entries()) {
    if (validate(object)) continue;
    const error = validate.errors?.[0];
    return { line: lines[i] ?? i + 1, problem: error ? phrase(error) : "it does not fit" };
  }
  return undefined;
}
