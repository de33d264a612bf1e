// Ray through its Jobs API, the REST API of the head's dashboard that `ray job submit`, `ray job
// status`, `ray job stop` and `ray job list` speak themselves (docs/distributed.md, "Sweeps on a
// Ray cluster"): one Ray job per variant, its entrypoint a script in the jobs folder that runs
// `arl run --resume` on the variant's run directory, the plan's CPUs and GPUs as the entrypoint's
// resources. Spoken over HTTP, so the submitting machine needs no Ray of its own, and every
// answer is JSON rather than a command's printout.
import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../plan/files.js";
import type { Plan } from "../plan/schema.js";
import { SchedulerRefused, SchedulerUnavailable, type JobPhase, type JobStatus } from "./jobs.js";
import { newScriptPath, timeStamp } from "./records.js";
import type { JobGroup, Scheduler } from "./scheduler.js";
import { gpusPerNode, shellWord } from "./slurm.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface RayOptions {
  /** The dashboard's address (http://HEAD:8265), from --address or RAY_ADDRESS. */
  readonly address: string;
  /** CPUs of each job's entrypoint; default 1 for the embedded CPU trainer, none asked otherwise. */
  readonly cpusPerTask?: number;
}

/** How long one request to the dashboard may take. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The launcher of a plan on several nodes (one `arl run` per node in a placement group). */
const NODES_LAUNCHER = fileURLToPath(new URL("../../runtime-gpu/ray_nodes.py", import.meta.url));

const HOW_TO_START =
  "start a head with 'ray start --head' (Ray with its dashboard: pip install 'ray[default]', or 'npm run setup:ray' in ARL's checkout, which makes .venv-ray)";

/**
 * The dashboard's address from `--address`, else RAY_ADDRESS: `http(s)://HOST:PORT`, or
 * `HOST:PORT`, read as http. Ray's client (`ray://`) and GCS addresses do not serve the Jobs API.
 */
export function rayAddress(given: string | undefined, env: Env): string {
  const text = (given ?? env.RAY_ADDRESS ?? "").trim();
  if (text === "")
    throw new SchedulerUnavailable(
      `no Ray cluster named: give its dashboard's address with --address http://HEAD:8265 or set RAY_ADDRESS; or ${HOW_TO_START}`,
    );
  if (/^ray:\/\//.test(text))
    throw new SchedulerUnavailable(
      `'${text}' is Ray Client's address; jobs are submitted to the dashboard's (--address http://HEAD:8265)`,
    );
  const url = /^https?:\/\//.test(text) ? text : `http://${text}`;
  return url.replace(/\/+$/, "");
}

/**
 * One request to the Jobs API; a dashboard that cannot be reached is SchedulerUnavailable. Through
 * node:http rather than fetch: fetch sends the Sec-Fetch-Mode header, and Ray's dashboard refuses
 * a POST that carries one as a browser's (its guard against cross-site requests).
 */
async function request(
  address: string,
  method: "GET" | "POST",
  route: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const url = new URL(`${address}${route}`);
  const payload = body !== undefined ? JSON.stringify(body) : undefined;
  try {
    return await new Promise((resolve, reject) => {
      const headers = {
        accept: "application/json",
        ...(payload !== undefined
          ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) }
          : {}),
      };
      const req = (url.protocol === "https:" ? https : http).request(
        url,
        { method, headers, timeout: REQUEST_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", reject);
        },
      );
      req.on("timeout", () =>
        req.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`), { code: "ETIMEDOUT" })),
      );
      req.on("error", reject);
      req.end(payload);
    });
  } catch (error) {
    const why = (error as { code?: string }).code ?? (error as Error).message;
    throw new SchedulerUnavailable(
      `no Ray cluster answers at ${address} (${why}); check the address (the dashboard's, port 8265 by default), or ${HOW_TO_START}`,
    );
  }
}

/** The dashboard's error: its last `SomethingError: message` line (it answers a refusal with a traceback). */
function errorText(text: string): string {
  const lines = text
    .trim()
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && l !== ".");
  const error = lines.findLast((l) => /^[\w.]*(Error|Exception): /.test(l));
  return (error ?? lines.at(-1) ?? "no message").replace(/^[\w.]*(Error|Exception): /, "").replace(/\.$/, "");
}

/** Checks the address serves Ray's Jobs API (GET /api/version); its Ray version. */
async function rayVersion(address: string): Promise<string> {
  const answer = await request(address, "GET", "/api/version");
  if (answer.status === 404)
    throw new SchedulerUnavailable(
      `${address} serves no Ray Jobs API (GET /api/version: 404): a Ray dashboard with its job server needs Ray's default extra (pip install 'ray[default]'; 'npm run setup:ray')`,
    );
  try {
    const body = JSON.parse(answer.text) as { ray_version?: string };
    if (answer.status === 200 && typeof body.ray_version === "string") return body.ray_version;
  } catch {
    // not JSON: not a Ray dashboard
  }
  throw new SchedulerUnavailable(
    `${address} does not answer as a Ray dashboard (GET /api/version: HTTP ${answer.status}); give the dashboard's address (port 8265 by default)`,
  );
}

/** What one job (one variant) asks: the nodes, and on each the CPUs and GPUs. */
export function jobResources(
  resources: Plan["resources"],
  cpusPerTask: number | undefined,
): { nodes: number; cpus?: number; gpus: number } {
  const cpus = cpusPerTask ?? (resources.backend === "local" ? 1 : undefined);
  return { nodes: resources.nodes, ...(cpus !== undefined ? { cpus } : {}), gpus: gpusPerNode(resources) };
}

/**
 * The script of one group's jobs. Job i runs `bash SCRIPT i JOB_ID`: it appends its output to
 * ray-JOB_ID.out in the jobs folder (Ray's own log of the job gets it too) and becomes
 * `arl run --resume`, so `ray job stop`'s SIGTERM reaches it. A plan on several nodes runs
 * runtime-gpu/ray_nodes.py, which starts one `arl run` per node.
 */
function rayScript(group: JobGroup, options: { cpusPerTask?: number; submittedAt: string }): string {
  const asked = jobResources(group.resources, options.cpusPerTask);
  const arl = group.arl.map(shellWord).join(" ");
  const width = Math.max(...group.tasks.map((t) => shellWord(t.run_dir).length));
  const launch =
    asked.nodes > 1
      ? [
          "# one arl run per node, in a placement group of one bundle per node: node 0 resumes the run directory,",
          "# the others start trainer workers from its plan; the rendezvous is in their environment (ARL_RAY_*)",
          `exec python3 ${shellWord(NODES_LAUNCHER)} --nodes ${asked.nodes} --gpus-per-node ${asked.gpus}${asked.cpus !== undefined ? ` --cpus-per-node ${asked.cpus}` : ""} --job "$2" --run "$run" -- ${arl} run`,
        ]
      : [`exec ${arl} run --resume "$run"`];
  return [
    "#!/bin/bash",
    `# Written by arl submit at ${options.submittedAt}: experiment ${group.experiment}, ${group.tasks.length} variant${group.tasks.length === 1 ? "" : "s"}, one Ray job per variant.`,
    "# Job i runs 'bash THIS_FILE i JOB_ID' and resumes runs[i] (a new run directory starts at iteration 1),",
    "# so a job submitted again continues from its run's last committed iteration.",
    "set -euo pipefail",
    "runs=(",
    ...group.tasks.map((t, i) => `  ${shellWord(t.run_dir).padEnd(width)}  # ${i}: ${group.experiment}/${t.variant}`),
    ")",
    "run=${runs[$1]}",
    "# the job's output also into the jobs folder, which arl status reads; tee outlives the stop signal to keep the last lines",
    `exec > >(trap '' INT TERM; exec tee -a "$(dirname "$0")/ray-$2.out") 2>&1`,
    'echo "arl submit: task $1 of job $2 on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ), run directory $run"',
    ...launch,
    "",
  ].join("\n");
}

/** A job's id: readable in `ray job list`, unique (Ray refuses a submission id it has seen). */
function submissionId(experiment: string, hash: string, now: Date): string {
  const name = experiment.replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 40);
  return `arl-${name}-${hash.replace(/^sha256:/, "").slice(0, 12)}-${timeStamp(now)}-${randomBytes(2).toString("hex")}`;
}

interface JobDetails {
  readonly submission_id?: string | null;
  readonly status: string;
  readonly message?: string | null;
  readonly error_type?: string | null;
  readonly driver_exit_code?: number | null;
}

/**
 * Ray's job states in the phases ARL decides by. FAILED is the run's own failure only when its
 * `arl run` exited with a status; killed by a signal (the OOM killer, a node lost) or ended by Ray
 * itself (its supervisor died with its node, it could not be scheduled) it is the cluster's doing.
 */
export function rayPhase(job: JobDetails): JobPhase {
  switch (job.status) {
    case "PENDING":
      return "pending";
    case "RUNNING":
      return "running";
    case "SUCCEEDED":
      return "completed";
    case "STOPPED":
      return "cancelled";
    default: {
      const exit = job.driver_exit_code;
      if (job.error_type === "JOB_ENTRYPOINT_COMMAND_ERROR" && typeof exit === "number" && exit > 0 && exit < 128)
        return "failed";
      return "preempted";
    }
  }
}

/** Plans a cluster's alive nodes could never run, in one message (undefined when all fit or the nodes cannot be read). */
async function unfitting(
  address: string,
  plans: readonly Plan[],
  cpusPerTask: number | undefined,
): Promise<string | undefined> {
  const answer = await request(address, "GET", "/api/v0/nodes?detail=1&limit=10000");
  let nodes: { state?: string; resources_total?: Record<string, number> }[];
  try {
    nodes = (JSON.parse(answer.text) as { data: { result: { result: typeof nodes } } }).data.result.result;
  } catch {
    return undefined;
  }
  const alive = nodes
    .filter((n) => n.state === "ALIVE")
    .map((n) => ({ cpus: n.resources_total?.CPU ?? 0, gpus: n.resources_total?.GPU ?? 0 }));
  if (answer.status !== 200 || alive.length === 0) return undefined;
  for (const plan of plans) {
    const asked = jobResources(plan.resources, cpusPerTask);
    const fit = alive.filter((n) => n.gpus >= asked.gpus && n.cpus >= (asked.cpus ?? 0)).length;
    if (fit >= asked.nodes) continue;
    const each = `${asked.gpus} GPU${asked.gpus === 1 ? "" : "s"}${asked.cpus !== undefined ? ` and ${asked.cpus} CPU${asked.cpus === 1 ? "" : "s"}` : ""}`;
    const most = `at most ${Math.max(...alive.map((n) => n.gpus))} GPUs and ${Math.max(...alive.map((n) => n.cpus))} CPUs on a node`;
    return `Ray cannot run ${plan.experiment}/${plan.variant}: it asks ${asked.nodes} node${asked.nodes === 1 ? "" : "s"} with ${each} each, and the ${alive.length} alive node${alive.length === 1 ? "" : "s"} at ${address} ha${alive.length === 1 ? "s" : "ve"} ${fit} such (${most}); nothing was submitted (change the plan's resources or --cpus-per-task, or add nodes: an autoscaling cluster's count once they are up)`;
  }
  return undefined;
}

/** Ray behind the scheduler interface: one job per variant, at the dashboard's address. */
export function rayScheduler(options: RayOptions): Scheduler {
  const { address } = options;
  return {
    name: "ray",
    label: "Ray",
    address,
    async check(plans) {
      await rayVersion(address);
      const refusal = await unfitting(address, plans, options.cpusPerTask);
      if (refusal !== undefined) throw new SchedulerRefused(refusal);
    },
    async jobs(ids) {
      const jobs = new Map<string, JobStatus>();
      if (ids.length === 0) {
        await rayVersion(address);
        return jobs;
      }
      const answer = await request(address, "GET", "/api/jobs/");
      if (answer.status !== 200)
        throw new SchedulerUnavailable(
          `Ray's job list at ${address} failed (HTTP ${answer.status}): ${errorText(answer.text)}`,
        );
      const wanted = new Set(ids);
      for (const job of JSON.parse(answer.text) as JobDetails[]) {
        const id = job.submission_id;
        if (typeof id !== "string" || !wanted.has(id)) continue;
        const reason = job.status === "FAILED" || job.status === "PENDING" ? (job.message ?? undefined) : undefined;
        jobs.set(id, {
          id,
          state: job.status,
          phase: rayPhase(job),
          ...(reason ? { reason: reason.split("\n")[0] ?? reason } : {}),
        });
      }
      return jobs;
    },
    async cancel(ids) {
      for (const id of ids) {
        const answer = await request(address, "POST", `/api/jobs/${encodeURIComponent(id)}/stop`);
        if (answer.status !== 200)
          throw new SchedulerRefused(`Ray did not stop job ${id} (HTTP ${answer.status}): ${errorText(answer.text)}`);
      }
    },
    async submit(group, accepted) {
      const script = newScriptPath(group.folder, group.now, "ray", "sh");
      const time = group.now.toISOString();
      writeFileAtomic(
        script,
        rayScript(group, {
          ...(options.cpusPerTask !== undefined ? { cpusPerTask: options.cpusPerTask } : {}),
          submittedAt: time,
        }),
      );
      const asked = jobResources(group.resources, options.cpusPerTask);
      // A plan on several nodes reserves its nodes in the launcher's placement group, not in the entrypoint.
      const entrypointResources =
        asked.nodes > 1
          ? {}
          : {
              ...(asked.cpus !== undefined ? { entrypoint_num_cpus: asked.cpus } : {}),
              ...(asked.gpus > 0 ? { entrypoint_num_gpus: asked.gpus } : {}),
            };
      for (const task of group.tasks) {
        const id = submissionId(group.experiment, task.hash, group.now);
        const body = {
          entrypoint: `bash ${shellWord(script)} ${task.task} ${id}`,
          submission_id: id,
          ...entrypointResources,
          metadata: {
            arl_experiment: group.experiment,
            arl_variant: task.variant,
            arl_plan_hash: task.hash,
            arl_run_dir: task.run_dir,
          },
        };
        const answer = await request(address, "POST", "/api/jobs/", body);
        if (answer.status !== 200)
          throw new SchedulerRefused(
            `Ray refused the job of ${group.experiment}/${task.variant} (script ${script}; HTTP ${answer.status}): ${errorText(answer.text)}`,
          );
        accepted({
          time,
          scheduler: "ray",
          address,
          job_id: id,
          script: path.basename(script),
          log: "ray-%A.out",
          tasks: [task],
        });
      }
    },
  };
}
