// The process layers of the findmax sandbox (see sandbox.ts for the whole list): which ones
// this machine has (probed once per process, each missing one left out cleanly; bubblewrap as
// the episode sandbox finds it, src/contracts/sandbox.ts), and the
// command line that stacks the available ones around the node process running the code.
// ARL_SANDBOX_WITHOUT (a comma list of layer names, or `bwrap` for bubblewrap alone) switches
// them off as on a machine that lacks them, to check the fallbacks and the refusal without the
// namespaces (docs/language.md, "kind: findmax").
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { bubblewrapSupport, systemRootArgs } from "../../../contracts/sandbox.js";

/** Which isolation layers this machine gives the sandbox process. */
export interface SandboxLayers {
  /** The permission-model flag passed to node, or null where Node has none. */
  readonly permission: string | null;
  /** The process runs in its own network namespace (no network). */
  readonly networkNamespace: boolean;
  /** A data-segment rlimit caps memory outside the V8 heap. */
  readonly dataLimit: boolean;
  /** Mount, PID and IPC namespaces (bubblewrap, else unshare): no files but its own, no processes but its own. */
  readonly namespaces: boolean;
}

/** A layer, or `bwrap`: bubblewrap alone (its namespaces then come from unshare where it can make them). */
export type SandboxSwitch = keyof SandboxLayers | "bwrap";
const SWITCHES: readonly SandboxSwitch[] = ["permission", "networkNamespace", "dataLimit", "namespaces", "bwrap"];

const STACK_SIZE_KB = 512;
/** Extra data-segment room over the heap limit: young generation, code, thread stacks, buffers. */
const DATA_HEADROOM_MB = 256;
const UNSHARE_PATHS = ["/usr/bin/unshare", "/bin/unshare"];
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
  /** unshare, where it also makes the mount and PID namespaces and the new root (ROOT_SCRIPT) that bwrap would. */
  readonly unshareRoot: string | null;
}

/** The folder, inside the scratch folder, where ROOT_SCRIPT mounts the new root. */
export const ROOT_MOUNT = ".root";

/**
 * What bwrapArgs sets up, done with util-linux inside `unshare -rnmpif` where bubblewrap is
 * missing: a tmpfs root holding /usr read-only (with the usual top-level links or folders), node,
 * a /proc of the new PID namespace, /dev/{null,zero,random,urandom}, a private /tmp and the
 * scratch folder read-only; then `unshare --root --wd` enters it. $1: the mount point, $2: the
 * scratch folder, $3: node, the rest: the command.
 */
const ROOT_SCRIPT = `set -e
R=$1; D=$2; N=$3; shift 3
mount -t tmpfs -o mode=755 arl-root "$R"
mkdir "$R/usr" "$R/proc" "$R/dev" "$R/tmp"
mount --rbind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"
for top in /bin /sbin /lib /lib32 /lib64 /libx32; do
  if [ -L "$top" ]; then ln -s "$(readlink "$top")" "$R$top"
  elif [ -d "$top" ]; then mkdir "$R$top"; mount --rbind "$top" "$R$top"; mount -o remount,bind,ro "$R$top"; fi
done
case "$N" in /usr/*) ;; *) mkdir -p "$R$(dirname "$N")"; touch "$R$N"; mount --bind "$N" "$R$N"; mount -o remount,bind,ro "$R$N" ;; esac
for dev in null zero random urandom; do touch "$R/dev/$dev"; mount --bind "/dev/$dev" "$R/dev/$dev"; done
mount -t proc proc "$R/proc"
mount -t tmpfs -o size=1m arl-tmp "$R/tmp"
mkdir -p "$R$D"; mount --bind "$D" "$R$D"; mount -o remount,bind,ro "$R$D"
mount -o remount,ro arl-root "$R"
exec unshare --root="$R" --wd="$D" -- "$@"`;

/** The command that runs `argv` in new user, network, mount, PID and IPC namespaces under the new root of ROOT_SCRIPT. */
function unshareRootArgs(unshare: string, dir: string, argv: readonly string[]): string[] {
  return [
    unshare,
    "-r",
    "-n",
    "-m",
    "-p",
    "-i",
    "-f",
    "--propagation",
    "private",
    "--",
    SHELL,
    "-c",
    ROOT_SCRIPT,
    "sh",
    path.join(dir, ROOT_MOUNT),
    dir,
    process.execPath,
    ...argv,
  ];
}

/**
 * bubblewrap's arguments: new namespaces of every kind (network included), a root holding /usr
 * read-only (with the usual top-level links into it), node, a private /proc, /dev and /tmp, and
 * the scratch folder read-only as the working folder.
 */
function bwrapArgs(dir: string): string[] {
  return [
    "--unshare-all",
    "--die-with-parent",
    ...systemRootArgs({ etc: false }),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--ro-bind",
    dir,
    dir,
    "--chdir",
    dir,
  ];
}

let capabilities: Promise<Capabilities> | undefined;

/** Probes (once per process) which layers work here; each one missing is left out cleanly. */
function probeAll(): Promise<Capabilities> {
  capabilities ??= (async () => {
    const flags = process.allowedNodeEnvironmentFlags;
    const flag = flags.has("--permission")
      ? "--permission"
      : flags.has("--experimental-permission")
        ? "--experimental-permission"
        : null;
    const node = process.execPath;
    const tmp = await realpath(os.tmpdir());
    const linux = process.platform === "linux";
    const unshare = linux ? (UNSHARE_PATHS.find((p) => existsSync(p)) ?? null) : null;
    const bubblewrap = bubblewrapSupport();
    const bwrap = "bwrap" in bubblewrap ? bubblewrap.bwrap : null;
    // The unshare root needs user namespaces (or root): a container may refuse them.
    const rootProbe = unshare ? await realpath(await mkdtemp(path.join(tmp, "arl-sandbox-probe-"))) : null;
    if (rootProbe) mkdirSync(path.join(rootProbe, ROOT_MOUNT));
    const [permissionOk, unshareOk, shellOk, unshareRootOk] = await Promise.all([
      flag
        ? probe(node, [
            flag,
            `--allow-fs-read=${tmp}${path.sep}`,
            "--no-warnings",
            "-e",
            "process.exit(process.permission ? 0 : 3)",
          ])
        : Promise.resolve(false),
      unshare ? probe(unshare, ["-r", "-n", "--", node, "-e", "0"]) : Promise.resolve(false),
      linux && existsSync(SHELL)
        ? probe(SHELL, ["-c", 'ulimit -d 1048576 && exec "$@"', "sh", node, "-e", "0"])
        : Promise.resolve(false),
      // Inside: pid 1 of its own PID namespace, under a root without the host's /etc.
      unshare && rootProbe
        ? probe(
            ...splitFirst(
              unshareRootArgs(unshare, rootProbe, [
                node,
                "-e",
                'process.exit(process.pid === 1 && !require("fs").existsSync("/etc") ? 0 : 3)',
              ]),
            ),
          )
        : Promise.resolve(false),
    ]);
    if (rootProbe) await rm(rootProbe, { recursive: true, force: true });
    return {
      permission: permissionOk ? flag : null,
      networkNamespace: unshareOk || bwrap !== null || unshareRootOk,
      unshare: unshareOk ? unshare : null,
      dataLimit: shellOk,
      namespaces: bwrap !== null || unshareRootOk,
      bwrap,
      unshareRoot: unshareRootOk ? unshare : null,
    };
  })();
  return capabilities;
}

const splitFirst = ([file, ...args]: readonly string[]): [string, string[]] => [file ?? "", args];

/** `caps` with `without`'s layers switched off; never a layer it lacks switched on. */
export function withoutLayers(caps: Capabilities, without: readonly SandboxSwitch[]): Capabilities {
  // The namespace tools give the network namespace too: switching that off switches them off.
  const noNamespaces = without.includes("namespaces") || without.includes("networkNamespace");
  const bwrap = noNamespaces || without.includes("bwrap") ? null : caps.bwrap;
  const unshareRoot = noNamespaces ? null : caps.unshareRoot;
  return {
    permission: without.includes("permission") ? null : caps.permission,
    networkNamespace: without.includes("networkNamespace") ? false : caps.networkNamespace,
    unshare: without.includes("networkNamespace") ? null : caps.unshare,
    dataLimit: without.includes("dataLimit") ? false : caps.dataLimit,
    namespaces: bwrap !== null || unshareRoot !== null,
    bwrap,
    unshareRoot,
  };
}

/** What ARL_SANDBOX_WITHOUT switches off (unknown names are ignored). */
function switchedOff(): SandboxSwitch[] {
  const names = (process.env.ARL_SANDBOX_WITHOUT ?? "").split(",").map((n) => n.trim());
  return SWITCHES.filter((l) => names.includes(l));
}

/** The layers this machine gives the sandbox, less those ARL_SANDBOX_WITHOUT switches off. */
export async function detect(): Promise<Capabilities> {
  return withoutLayers(await probeAll(), switchedOff());
}

/** The isolation layers in effect on this machine (for reports and tests). */
export async function sandboxLayers(): Promise<SandboxLayers> {
  const { permission, networkNamespace, dataLimit, namespaces } = await detect();
  return { permission, networkNamespace, dataLimit, namespaces };
}

/**
 * The command line that runs `script` in the sandbox's process layers: node with its limits and
 * permission flags, inside bubblewrap or unshare (with a new root, or the network namespace
 * alone), under the data-segment rlimit, as `caps` allows. The scratch folder must hold ROOT_MOUNT.
 */
export function isolatedCommand(
  script: string,
  dir: string,
  limits: { readonly memoryLimitMb: number },
  caps: Capabilities,
): [string, ...string[]] {
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
  else if (caps.unshareRoot) argv = unshareRootArgs(caps.unshareRoot, dir, argv) as [string, ...string[]];
  else if (caps.unshare) argv = [caps.unshare, "-r", "-n", "--", ...argv];
  if (caps.dataLimit) {
    const kb = (limits.memoryLimitMb + DATA_HEADROOM_MB) * 1024;
    argv = [SHELL, "-c", `ulimit -d ${kb} && exec "$@"`, "sh", ...argv];
  }
  return argv;
}
