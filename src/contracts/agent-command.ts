// The words of an agent command the runtime resolves on this machine (docs/gateway.md#agent-programs),
// so that a stdlib env can name a program shipped with arl and the Python that runs it without a
// path the plan would have to hold: `std:PATH` is the file PATH below the stdlib's `std/`
// (`std:agents/verifiers_taskset.py`), and a first word `python:envservers` is the env servers'
// Python. Every other word is passed as written.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { STDLIB_ROOT } from "./paths.js";
import { envServersPython } from "./python.js";

/** The Pythons a first word `python:NAME` may name, and where each is found. */
const PYTHONS: Readonly<Record<string, () => string>> = { envservers: envServersPython };

/** The stdlib file `std:PATH` names, or undefined when the word is not one (or leaves `std/`). */
function stdlibProgram(word: string): string | undefined {
  if (!word.startsWith("std:")) return undefined;
  const relative = word.slice("std:".length);
  const root = path.join(STDLIB_ROOT, "std");
  const resolved = path.resolve(root, relative);
  return relative !== "" && !path.isAbsolute(relative) && resolved.startsWith(`${root}${path.sep}`)
    ? resolved
    : undefined;
}

/** The Python a first word `python:NAME` names; undefined for any other word. */
function namedPython(word: string): string | undefined {
  const name = word.slice("python:".length);
  return word.startsWith("python:") && Object.hasOwn(PYTHONS, name) ? PYTHONS[name]?.() : undefined;
}

/**
 * What is wrong with a word the runtime would resolve (a `std:` path outside the stdlib or not
 * there, an unknown `python:` name), for `arl check`; undefined when the word is fine.
 */
export function agentCommandProblem(word: string, first: boolean): { message: string; hint: string } | undefined {
  if (first && word.startsWith("python:") && !Object.hasOwn(PYTHONS, word.slice("python:".length))) {
    return {
      message: `'${word}' names no Python arl knows`,
      hint: `write ${Object.keys(PYTHONS)
        .map((n) => `python:${n}`)
        .join(" or ")}, or the interpreter's path`,
    };
  }
  if (!word.startsWith("std:")) return undefined;
  const file = stdlibProgram(word);
  if (file === undefined || !existsSync(file))
    return {
      message: `'${word}' names no file of the stdlib's std/ folder`,
      hint: "write the path below std/, e.g. std:agents/verifiers_taskset.py",
    };
  return undefined;
}

/** The command as it is started here. */
export function resolveAgentCommand(command: readonly string[]): string[] {
  return command.map((word, i) => (i === 0 ? namedPython(word) : undefined) ?? stdlibProgram(word) ?? word);
}

/**
 * The JSON Schema of the task lines a stdlib program reads, when it ships one beside it
 * (`std:agents/X.py` and `agents/X.task.schema.json`), so that `arl check` types a task file
 * against its program; undefined for a command without such a program.
 */
export function stdlibTaskSchema(
  command: readonly string[],
): { readonly program: string; readonly schema: Record<string, unknown> } | undefined {
  for (const word of command) {
    const file = stdlibProgram(word);
    const schema = file?.replace(/\.[^./]+$/, ".task.schema.json");
    if (schema !== undefined && schema !== file && existsSync(schema))
      return { program: word, schema: JSON.parse(readFileSync(schema, "utf8")) as Record<string, unknown> };
  }
  return undefined;
}
