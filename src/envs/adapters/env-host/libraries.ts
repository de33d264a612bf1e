// The env kinds of the Python env libraries (docs/env-host.md, "Env library sessions"): one
// EnvKind over the env host for every library (src/contracts/libraries/), so a library
// needs no TypeScript of its own beyond its declaration. At provision the host starts (from the
// Python that has the libraries, envLibraryPythonCandidates), the library prepares the env's tasks
// (TextWorld: generates or finds its cached games; their sha256 go to the run directory and are
// checked again on resume), and the words of the tasks are read for the embedded model's
// vocabulary, which `vocabulary` then returns synchronously. Each episode is a session of the
// host; a failure of one (the library raised, a step ran past timeout_s, the host died) is that
// episode's env error, with the traceback appended to env-host.log in the run directory.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type EnvProvisionContext,
  type Signals,
} from "../../../contracts/env.js";
import { envLibraryPythonCandidates } from "../../../contracts/python.js";
import type { ToolCall } from "../../../contracts/tool-calls.js";
import type { PlanEnv } from "../../../plan/schema.js";
import type { HostLibraryKind } from "../../../semantics/schema/env.js";
import type { HostLibrary } from "../../../contracts/libraries/library.js";
import { verifyDataFile } from "../../data-files.js";
import { EnvHost, EnvHostError } from "./client.js";

/** An env of some host library, as the plan holds it. */
export type HostLibraryEnv = Extract<PlanEnv, { kind: HostLibraryKind }>;

/** What a kind needs of its library's declaration: its knobs' names, its data knobs, whether a turn without a tool call is an answer. */
export type HostLibraryKindSpec = Pick<
  HostLibrary,
  "kind" | "knobs" | "folders" | "files" | "answers" | "walkthroughs" | "seededTasks"
>;

interface HashedFile {
  readonly path: string;
  readonly sha256: string;
}

/** What the host answers to episode.open and episode.step (docs/env-host.md). */
interface HostStep {
  readonly episode?: string;
  readonly observation: string;
  readonly signals: Signals;
  readonly done: boolean;
  readonly messages?: readonly { role: "system" | "user" | "assistant"; content: string }[];
}

/** A prepared task file, as recorded in the run directory. */
interface PreparedFile {
  readonly task: number;
  readonly path: string;
  readonly sha256: string;
}

export interface HostEnvOptions {
  /** The spec's folder: relative data paths are read from there. */
  readonly root?: string;
  readonly python?: string;
  /** Where generated tasks are cached across runs; default $ARL_ENV_CACHE, else ~/.cache/arl/envs. */
  readonly cacheDir?: string;
}

/** The run directory's record of an env's prepared files (checked on resume). */
export const preparedFileName = (env: string): string => `env-${env}-files.json`;

/** The free-text action of a call: the action tool's one argument, or a text-action verb with its arguments. */
function actionText(call: ToolCall, actionTool: string): string {
  const values = Object.values(call.arguments).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  return call.name === actionTool ? values.join(" ") : [call.name, ...values].join(" ");
}

/** The episode of an open that failed: its reset (and anything after) is that env error, so the harness records the episode as `env_error`. */
function unopened(error: EnvError): EnvInstance {
  const fail = () => Promise.reject(error);
  return { reset: fail, step: fail, outcome: fail, close: () => Promise.resolve() };
}

/** The host library env kinds of one run, sharing one env host. */
export function createHostEnvKinds(
  libraries: readonly HostLibraryKindSpec[],
  options: HostEnvOptions = {},
): Map<string, EnvKind<HostLibraryEnv>> {
  let host: EnvHost | undefined;
  let logFile: string | undefined;
  const words = new Map<string, readonly string[]>();
  const root = options.root ?? process.cwd();
  const cacheDir = options.cacheDir ?? process.env.ARL_ENV_CACHE ?? path.join(os.homedir(), ".cache", "arl", "envs");

  const hostOf = (): EnvHost => {
    host ??= new EnvHost({
      cwd: root,
      python: options.python ?? envLibraryPythonCandidates()[0] ?? "python3",
      setupHint:
        "run 'npm run setup:envs' (installs them into .venv), or set ARL_ENVS_PYTHON to a Python that has them",
    });
    return host;
  };
  const plain = (env: HostLibraryEnv): Readonly<Record<string, unknown>> => env;
  /** The env's data files (its file knobs' and folder knobs'), each with its sha256 in the plan. */
  function dataFiles(env: HostLibraryEnv, library: HostLibraryKindSpec): HashedFile[] {
    const knobs = plain(env);
    const files = Object.keys(library.files ?? {}).map((k) => knobs[k] as HashedFile | null);
    const folders = Object.keys(library.folders ?? {}).flatMap(
      (k) => (knobs[k] as { files: HashedFile[] } | null)?.files ?? [],
    );
    return [...files.filter((f): f is HashedFile => f !== null), ...folders];
  }
  /**
   * What the library is given (docs/env-host.md, "Env library sessions"): its own knobs only, a
   * file knob as its path relative to the data root, a folder knob as its hashed files; and the
   * env's `tasks` where the library makes its tasks from a range of seeds of that length.
   */
  function configOf(env: HostLibraryEnv, library: HostLibraryKindSpec): Record<string, unknown> {
    const knobs = plain(env);
    const own = Object.fromEntries(
      Object.keys(library.knobs).map((k) => [
        k,
        library.files?.[k] ? ((knobs[k] as HashedFile | null)?.path ?? null) : knobs[k],
      ]),
    );
    return library.seededTasks ? { ...own, tasks: env.tasks } : own;
  }
  const configKey = (env: HostLibraryEnv): string => JSON.stringify(env);

  /** A host failure as the episode's env error: the Python traceback goes to env-host.log. */
  function hostFailure(error: unknown, what: string): EnvError {
    if (!(error instanceof EnvError)) throw error;
    const failure = error instanceof EnvHostError ? error.failure : undefined;
    if (failure?.traceback && logFile) appendFileSync(logFile, `--- ${what}\n${failure.traceback}\n`);
    const logged = failure?.traceback && logFile ? ` (traceback in ${path.basename(logFile)})` : "";
    return new EnvError(`${what}: ${error.message}${logged}`, error.kind);
  }
  function envError(error: unknown, what: string): never {
    throw hostFailure(error, what);
  }

  function kindFor(library: HostLibraryKindSpec): EnvKind<HostLibraryEnv> {
    const { kind, answers, walkthroughs } = library;
    const config = (env: HostLibraryEnv) => configOf(env, library);
    return {
      kind: kind as HostLibraryEnv["kind"],
      async provision(env, context: EnvProvisionContext) {
        logFile = path.join(context.runDir, "env-host.log");
        const record = path.join(context.runDir, preparedFileName(context.name));
        const recorded = existsSync(record)
          ? (JSON.parse(readFileSync(record, "utf8")) as { files: PreparedFile[] }).files
          : null;
        for (const file of dataFiles(env, library)) verifyDataFile(file, root, "data", kind);
        const prepared = (await hostOf()
          .requestReplayed(
            `prepare:${configKey(env)}`,
            "backend.prepare",
            {
              library: kind,
              config: config(env),
              context: { data_root: root, cache_dir: cacheDir, recorded },
              timeout_s: env.prepare_timeout_s,
            },
            env.prepare_timeout_s,
          )
          .catch((e: unknown) => envError(e, `env '${context.name}' (${kind}): preparing its tasks`))) as {
          task_count: number | null;
          files?: PreparedFile[];
          version?: string;
        };
        // null: the library's tasks are unbounded (seeded).
        if (prepared.task_count !== null && prepared.task_count < env.tasks)
          throw new EnvError(
            `env '${context.name}' (${kind}): the library has ${prepared.task_count} tasks, and the plan declares tasks: ${env.tasks}`,
            "protocol",
          );
        if (prepared.files && !recorded)
          writeFileSync(
            record,
            `${JSON.stringify({ library: kind, version: prepared.version ?? null, files: prepared.files }, null, 1)}\n`,
          );
        context.log(
          `env '${context.name}': ${kind} ${prepared.version ?? ""} prepared ${prepared.task_count ?? env.tasks} tasks${recorded ? " (the recorded files' sha256 checked)" : ""}`,
        );
        const tasks = Array.from({ length: env.tasks }, (_, i) => i);
        const vocabulary = (await hostOf()
          .request(
            "backend.vocabulary",
            { library: kind, config: config(env), tasks, data_root: root, timeout_s: env.prepare_timeout_s },
            env.prepare_timeout_s,
          )
          .catch((e: unknown) => envError(e, `env '${context.name}' (${kind}): reading its words`))) as {
          words: string[];
        };
        words.set(configKey(env), vocabulary.words);
      },
      vocabulary(env) {
        // Filled by provision (which runs before the model is built); the harness's words cover the rest.
        return words.get(configKey(env)) ?? [];
      },
      // Only a library with walkthroughs offers them (KINDS_WITH_WALKTHROUGHS: rollout.sft is refused at check for the others).
      ...(walkthroughs
        ? {
            async walkthrough(env: HostLibraryEnv, task: number) {
              const answer = (await hostOf()
                .request(
                  "backend.walkthrough",
                  { library: kind, config: config(env), task, data_root: root, timeout_s: env.timeout_s },
                  env.timeout_s,
                )
                .catch((e: unknown) => envError(e, `${kind} task ${task}: its walkthrough`))) as {
                actions: string[] | null;
              };
              return answer.actions?.map((command) => ({ name: env.action_tool, arguments: { command } }));
            },
          }
        : {}),
      async create(env, task, seed) {
        const h = hostOf();
        const opening = await h
          .request(
            "episode.open",
            { library: kind, config: config(env), task, seed, data_root: root, timeout_s: env.timeout_s },
            env.timeout_s,
          )
          .catch((e: unknown) => hostFailure(e, `${kind} task ${task}: opening its episode`));
        // An open that failed (the backend raised, ran out of time, or its host died meanwhile) ends this episode only.
        if (opening instanceof EnvError) return unopened(opening);
        const opened = opening as HostStep;
        const generation = h.generation;
        const id = opened.episode ?? "";
        const gone = () =>
          new EnvError(
            `${kind} task ${task}: the env host restarted (it died or was stopped), and this episode's game was lost with it`,
            "crash",
          );
        const call = (method: string, params: Record<string, unknown>) =>
          h
            .requestOn(generation, method, { episode: id, ...params, timeout_s: env.timeout_s }, env.timeout_s, gone)
            .catch((e: unknown) => envError(e, `${kind} task ${task}: ${method}`));
        const instance: EnvInstance = {
          reset: () =>
            Promise.resolve({
              text: opened.observation,
              ...(opened.messages ? { messages: opened.messages } : {}),
              signals: opened.signals,
            }),
          async step(toolCall) {
            const step = (await call("episode.step", { action: actionText(toolCall, env.action_tool) })) as HostStep;
            return { text: step.observation, signals: step.signals, terminated: step.done };
          },
          ...(answers
            ? {
                async finalAnswer(text: string) {
                  return ((await call("episode.answer", { text })) as { signals: Signals | null }).signals ?? {};
                },
              }
            : {}),
          async outcome() {
            return ((await call("episode.outcome", {})) as { signals: Signals }).signals;
          },
          async close() {
            // A host that restarted has no such episode any more: nothing to close.
            await h
              .requestOn(generation, "episode.close", { episode: id, timeout_s: env.timeout_s }, env.timeout_s, gone)
              .catch(() => undefined);
          },
        };
        return instance;
      },
      async shutdown() {
        // Every kind of the run shares the host, and the run shuts the kinds down at once.
        const running = host;
        host = undefined;
        await running?.close().catch(() => undefined);
      },
    };
  }
  return new Map(libraries.map((l) => [l.kind, kindFor(l)]));
}
