// The process layers of the findmax sandbox (see sandbox.ts for the whole list): which ones
// this machine has (probed once per process, each missing one left out cleanly), and the
// command line that stacks the available ones around the node process running the code.
import { spawn } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import { realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** Which isolation layers this machine gives the sandbox process. */
export interface SandboxLayers {
  /** The permission-model flag passed to node, or null where Node has none. */
  readonly permission: string | null;
  /** The process runs in its own network namespace (no network). */
  readonly networkNamespace: boolean;
  /** A data-segment rlimit caps memory outside the V8 heap. */
  readonly dataLimit: boolean;
  /** Mount, PID and IPC namespaces (bubblewrap): no files but its own, no processes but its own. */
  readonly namespaces: boolean;
}

const STACK_SIZE_KB = 512;
/** Extra data-segment room over the heap limit: young generation, code, thread stacks, buffers. */
const DATA_HEADROOM_MB = 256;
const UNSHARE_PATHS = ["/usr/bin/unshare", "/bin/unshare"];
const BWRAP_PATHS = ["/usr/bin/bwrap", "/bin/bwrap"];
const SHELL = "/bin/sh";

function probe(file: string, args: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: "ignore", env: {} });
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.on("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

export interface Capabilities extends SandboxLayers {
  readonly unshare: string | null;
  readonly bwrap: string | null;
}

/**
 * bubblewrap's arguments: new namespaces of every kind (network included), a root holding /usr
 * read-only (with the usual top-level links into it), node, a private /proc, /dev and /tmp, and
 * the scratch folder read-only as the working folder.
 */
function bwrapArgs(dir: string): string[] {
  const args = ["--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"];
  for (const top of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) {
    let target: string | undefined;
    try {
      target = readlinkSync(top);
    } catch {
      if (existsSync(top)) args.push("--ro-bind", top, top);
      continue;
    }
    args.push("--symlink", target, top);
  }
  const node = process.execPath;
  if (!node.startsWith("/usr/")) args.push("--ro-bind", node, node);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", dir, dir, "--chdir", dir);
  return args;
}

let capabilities: Promise<Capabilities> | undefined;

/** Probes (once per process) which layers work here; each one missing is left out cleanly. */
export function detect(): Promise<Capabilities> {
  capabilities ??= (async () => {
    const flags = process.allowedNodeEnvironmentFlags;
    const flag = flags.has("--permission") ? "--permission" : flags.has("--experimental-permission") ? "--experimental-permission" : null;
    const node = process.execPath;
    const tmp = await realpath(os.tmpdir());
    const linux = process.platform === "linux";
    const unshare = linux ? (UNSHARE_PATHS.find((p) => existsSync(p)) ?? null) : null;
    const bwrap = linux ? (BWRAP_PATHS.find((p) => existsSync(p)) ?? null) : null;
    // bubblewrap needs user namespaces (or root): a container may refuse them.
    const [permissionOk, unshareOk, shellOk, bwrapOk] = await Promise.all([
      flag ? probe(node, [flag, `--allow-fs-read=${tmp}${path.sep}`, "--no-warnings", "-e", "process.exit(process.permission ? 0 : 3)"]) : Promise.resolve(false),
      unshare ? probe(unshare, ["-r", "-n", "--", node, "-e", "0"]) : Promise.resolve(false),
      linux && existsSync(SHELL) ? probe(SHELL, ["-c", 'ulimit -d 1048576 && exec "$@"', "sh", node, "-e", "0"]) : Promise.resolve(false),
      bwrap ? probe(bwrap, [...bwrapArgs(tmp), "--", node, "-e", "0"]) : Promise.resolve(false),
    ]);
    return {
      permission: permissionOk ? flag : null,
      networkNamespace: unshareOk || bwrapOk,
      unshare: unshareOk ? unshare : null,
      dataLimit: shellOk,
      namespaces: bwrapOk,
      bwrap: bwrapOk ? bwrap : null,
    };
  })();
  return capabilities;
}

/** The isolation layers in effect on this machine (for reports and tests). */
export async function sandboxLayers(): Promise<SandboxLayers> {
  const { permission, networkNamespace, dataLimit, namespaces } = await detect();
  return { permission, networkNamespace, dataLimit, namespaces };
}

/**
 * The command line that runs `script` in the sandbox's process layers: node with its limits and
 * permission flags, inside bubblewrap or unshare, under the data-segment rlimit, as `caps` allows.
 */
export function isolatedCommand(script: string, dir: string, limits: { readonly memoryLimitMb: number }, caps: Capabilities): [string, ...string[]] {
  const nodeArgs = [
    `--max-old-space-size=${limits.memoryLimitMb}`,
    `--stack-size=${STACK_SIZE_KB}`,
    "--disallow-code-generation-from-strings",
    "--no-warnings",
    ...(caps.permission ? [caps.permission, `--allow-fs-read=${dir}${path.sep}`] : []),
    script,
  ];
  let argv: [string, ...string[]] = [process.execPath, ...nodeArgs];
  if (caps.bwrap) argv = [caps.bwrap, ...bwrapArgs(dir), "--", ...argv];
  else if (caps.unshare) argv = [caps.unshare, "-r", "-n", "--", ...argv];
  if (caps.dataLimit) {
    const kb = (limits.memoryLimitMb + DATA_HEADROOM_MB) * 1024;
    argv = [SHELL, "-c", `ulimit -d ${kb} && exec "$@"`, "sh", ...argv];
  }
  return argv;
}
