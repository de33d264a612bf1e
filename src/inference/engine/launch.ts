// Launched inference servers (resources.rollout.launch: true; docs/engines.md, "Launch"). Each
// server runs the wire's launch command, or `arl run --engine-command`'s in its place, on a free
// port the runtime picked, in a process group of its own (contracts/process-group.ts), with
// stdout and stderr in RUN/engines/server-<i>.log, and is health-checked until it can generate.
// GPUs: server i sees gpus_per_server devices after the trainer's, counted through the runtime's
// own CUDA_VISIBLE_DEVICES when it has one. Stopped at the end of the run and on every failure
// path; killed with the runtime's process if that exits first.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { killGroup, OWN_PROCESS_GROUP, trackGroup } from "../../contracts/process-group.js";
import { newProcessMark } from "../../contracts/process-mark.js";
import type { Plan } from "../../plan/schema.js";
import type { EngineLaunchCommand, EngineWire } from "./contract.js";
import { callServer } from "./http.js";

/** A server that cannot generate this long after its start has failed to start (a large model loads for minutes). */
const READY_DEADLINE_MS = 900_000;
const POLL_MS = 250;
/** How long a stopped server has between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 10_000;
const LOG_TAIL_LINES = 20;

export const ENGINES_DIR = "engines";

export class EngineLaunchError extends Error {}

/** A free TCP port on 127.0.0.1 (free when asked: the server binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The model as an engine loads it: a hub name without ARL's `hf:` prefix, or a path. */
export function engineModel(plan: Plan): string {
  return plan.policy.model.startsWith("hf:") ? plan.policy.model.slice(3) : plan.policy.model;
}

/** The GPUs the trainer uses on this machine, before which no server's GPU is counted. */
function trainerGpus(plan: Plan): number {
  return plan.resources.backend === "torch" ? Math.ceil(plan.resources.gpus / plan.resources.nodes) : 0;
}

/**
 * CUDA_VISIBLE_DEVICES of server `index`: gpus_per_server devices after the trainer's, as
 * indices of the runtime's own visible devices when it has a list (a scheduler's allocation).
 */
export function serverDevices(plan: Plan, index: number, visible: string | undefined): string {
  const per = plan.resources.rollout.gpus_per_server;
  const first = trainerGpus(plan) + index * per;
  const own = visible
    ?.split(",")
    .map((d) => d.trim())
    .filter(Boolean);
  return Array.from({ length: per }, (_, k) => (own ? (own[first + k] ?? String(first + k)) : String(first + k))).join(
    ",",
  );
}

export interface LaunchValues {
  readonly port: number;
  readonly model: string;
  readonly plan: string;
  readonly seed: number;
  readonly index: number;
}

/** `--engine-command`: split on spaces, then `{port}`, `{model}`, `{plan}`, `{seed}`, `{index}` replaced in each word (no shell). */
export function engineCommandLine(template: string, values: LaunchValues): EngineLaunchCommand {
  const words = template
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.replace(/\{(port|model|plan|seed|index)\}/g, (_, key: keyof LaunchValues) => String(values[key])));
  const [command = "", ...args] = words;
  return { command, args, env: {} };
}

export interface LaunchedServer {
  readonly index: number;
  readonly url: string;
  readonly pid: number | undefined;
  readonly log: string;
  readonly command: readonly string[];
  readonly devices: string;
}

function logTail(file: string): string {
  try {
    const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(-LOG_TAIL_LINES);
    return lines.map((l) => `  | ${l}`).join("\n");
  } catch {
    return "  (no log)";
  }
}

/** The servers started for one run; `stop` ends them all (idempotent). */
export class LaunchedServers {
  private readonly children: ChildProcess[] = [];
  readonly servers: LaunchedServer[] = [];

  async stop(): Promise<void> {
    await Promise.all(this.children.map(stopChild));
    this.children.length = 0;
  }

  /** Kills them at once (a failure or an interrupt). */
  kill(): void {
    for (const child of this.children) killGroup(child.pid);
  }

  /**
   * Starts `count` servers and waits until every one answers its health call. On any failure the
   * ones started are stopped and an EngineLaunchError quotes the failing server's log.
   */
  static async start(options: {
    readonly plan: Plan;
    readonly wire: EngineWire;
    readonly runDir: string;
    /** `arl run --engine-command`; absent: the wire's own command. */
    readonly engineCommand: string | undefined;
    /** `arl run --engine-python`: the interpreter the wire's own command runs the engine with. */
    readonly enginePython?: string | undefined;
    readonly planFile: string;
    readonly halt?: AbortSignal | undefined;
  }): Promise<LaunchedServers> {
    const { plan, wire } = options;
    const launched = new LaunchedServers();
    const dir = path.join(options.runDir, ENGINES_DIR);
    mkdirSync(dir, { recursive: true });
    const rollout = plan.resources.rollout;
    const model = engineModel(plan);
    try {
      const ready: Promise<void>[] = [];
      for (let index = 0; index < rollout.servers; index++) {
        const port = await freePort();
        const own = wire.launchCommand({
          model,
          host: "127.0.0.1",
          port,
          seed: plan.seed,
          dtype: plan.policy.dtype,
          gpus: Math.max(1, rollout.gpus_per_server),
          maxModelLen: null,
          loraRank: plan.policy.lora?.rank ?? null,
          python: options.enginePython ?? null,
        });
        // A command of the user's own still gets the variables ARL's weight sync needs of the
        // engine (vLLM's development-mode routes, runtime LoRA loading).
        const command = options.engineCommand
          ? {
              ...engineCommandLine(options.engineCommand, {
                port,
                model,
                plan: options.planFile,
                seed: plan.seed,
                index,
              }),
              env: own.env,
            }
          : own;
        const log = path.join(dir, `server-${index}.log`);
        const devices = serverDevices(plan, index, process.env.CUDA_VISIBLE_DEVICES);
        const fd = openSync(log, "a");
        // Marked: an engine's workers may leave its group.
        const mark = newProcessMark();
        let child: ChildProcess;
        try {
          child = spawn(command.command, [...command.args], {
            ...OWN_PROCESS_GROUP,
            stdio: ["ignore", fd, fd],
            env: { ...process.env, ...command.env, CUDA_VISIBLE_DEVICES: devices, ...mark.env },
          });
        } finally {
          closeSync(fd);
        }
        trackGroup(child, mark);
        launched.children.push(child);
        const server: LaunchedServer = {
          index,
          url: `http://127.0.0.1:${port}`,
          pid: child.pid,
          log,
          command: [command.command, ...command.args],
          devices,
        };
        launched.servers.push(server);
        ready.push(waitReady(server, child, wire, options.halt));
      }
      await Promise.all(ready);
      return launched;
    } catch (error) {
      await launched.stop();
      throw error;
    }
  }
}

/** Polls the server's health call until it answers 200; fails when the process exits first, at the deadline, or on halt. */
async function waitReady(
  server: LaunchedServer,
  child: ChildProcess,
  wire: EngineWire,
  halt: AbortSignal | undefined,
): Promise<void> {
  let exited: string | undefined;
  let spawnError: string | undefined;
  child.once("exit", (code, signal) => (exited = signal ? `was killed by ${signal}` : `exited with status ${code}`));
  child.once("error", (e) => (spawnError = e.message));
  const deadline = Date.now() + READY_DEADLINE_MS;
  const what = `inference server ${server.index} (${server.command.join(" ")})`;
  for (;;) {
    if (spawnError) throw new EngineLaunchError(`${what} could not start: ${spawnError}`);
    if (exited)
      throw new EngineLaunchError(
        `${what} ${exited} before it could generate; the end of ${server.log}:\n${logTail(server.log)}`,
      );
    if (halt?.aborted) throw new EngineLaunchError(`${what}: stopped before it was ready`);
    try {
      await callServer(server.url, wire.health(), POLL_MS * 8);
      return;
    } catch {
      // Not listening yet, or still loading.
    }
    if (Date.now() > deadline)
      throw new EngineLaunchError(
        `${what} did not answer its health check within ${READY_DEADLINE_MS / 1000} s; the end of ${server.log}:\n${logTail(server.log)}`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** SIGTERM to the server's group, SIGKILL after the grace period. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), STOP_GRACE_MS);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    killGroup(child.pid, "SIGTERM");
  });
}
