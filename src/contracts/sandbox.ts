// The episode sandbox (docs/envs.md#what-an-episode-can-reach): a command run under bubblewrap in
// its own user, pid, ipc, uts, cgroup and mount namespaces (and its own network namespace, which
// holds only loopback, unless the spec allows the network), with the system read-only, a private
// size-limited /tmp as its one writable folder, a cleared environment and rlimits set by
// prlimit. Used by the agent and subprocess env kinds; the findmax sandbox takes its root from
// here too. Each episode's processes see no process and no file of another episode: its /proc
// is its own pid namespace's, and only the folders it needs are bound into its root.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

/** The per-episode limits the sandbox sets (rlimits; wall time and output are the caller's). */
export interface SandboxLimits {
  /** CPU seconds of each process (RLIMIT_CPU). */
  readonly cpuS: number;
  /** Data (heap and private writable mappings) of each process, in MiB (RLIMIT_DATA: unlike RLIMIT_AS, it leaves the address space V8 and JVMs reserve). */
  readonly memoryMb: number;
  /** Processes of the episode's user namespace (RLIMIT_NPROC; the kernel does not apply it to root, whose episodes get a pids cgroup: sandbox-cgroup.ts). */
  readonly processes: number;
  /** Size of the private /tmp and the largest file a process may write, in MiB (RLIMIT_FSIZE). */
  readonly diskMb: number;
}

/** How one command runs in the sandbox. */
export interface SandboxOptions {
  readonly bwrap: string;
  /** Working folder inside; bound read-only when not already visible. */
  readonly cwd: string;
  /** Host paths made visible read-only at the same place. */
  readonly readOnly: readonly string[];
  /** Host paths hidden under an empty folder (a run directory inside a visible folder). */
  readonly hidden?: readonly string[];
  /** Host files bound at another path inside: [host, inside]. */
  readonly bind?: readonly (readonly [string, string])[];
  /** Keep the host's network namespace (false: only loopback, the sandbox's own). */
  readonly network: boolean;
  /** The whole environment of the command: the caller spawns bubblewrap with it, and nothing else. */
  readonly env: Readonly<Record<string, string>>;
  readonly limits: SandboxLimits;
}

/** Sets the rlimits inside the sandbox (util-linux, in /usr so that every sandbox sees it). */
const PRLIMIT = "/usr/bin/prlimit";

/** The top-level links or folders of a usual Linux root (usr-merged or not). */
const TOP_LEVEL = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * bubblewrap's arguments for a root holding /usr read-only with the usual top-level links or
 * folders, node where it lies outside /usr, and, with `etc`, /etc and /opt read-only.
 */
export function systemRootArgs(options: { readonly etc: boolean }): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const top of [...TOP_LEVEL, ...(options.etc ? ["/etc", "/opt"] : [])]) {
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
  return args;
}

/** The file `name` is found at on `pathEnv`, or null. */
function onPath(name: string, pathEnv: string | undefined): string | null {
  for (const dir of (pathEnv ?? "").split(":")) {
    if (dir === "") continue;
    const file = path.join(dir, name);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** What detection found: bubblewrap that makes every namespace, or why there is none. */
export type SandboxSupport = { readonly bwrap: string } | { readonly problem: string };

const probed = new Map<string, SandboxSupport>();

/**
 * Whether bubblewrap on `pathEnv` (the process's PATH unless given) can make the sandbox here:
 * found, able to create its namespaces (a container may refuse user namespaces), and prlimit
 * there to set the limits. Probed once per PATH value.
 */
export function sandboxSupport(pathEnv: string | undefined = process.env.PATH): SandboxSupport {
  const support = bubblewrapSupport(pathEnv);
  return "bwrap" in support && !existsSync(PRLIMIT)
    ? { problem: `${PRLIMIT} (util-linux) is missing: it sets the episodes' limits` }
    : support;
}

/**
 * Whether bubblewrap on `pathEnv` is found and can create every namespace here (the findmax
 * sandbox needs no more; the episode sandbox needs prlimit too: sandboxSupport). Probed once per
 * PATH value.
 */
export function bubblewrapSupport(pathEnv: string | undefined = process.env.PATH): SandboxSupport {
  const key = pathEnv ?? "";
  const known = probed.get(key);
  if (known) return known;
  let found: SandboxSupport;
  const bwrap = process.platform === "linux" ? onPath("bwrap", pathEnv) : null;
  if (bwrap === null)
    found = {
      problem:
        process.platform === "linux"
          ? "bubblewrap (bwrap) is not on PATH"
          : `bubblewrap does not exist for ${process.platform}`,
    };
  else {
    const run = spawnSync(
      bwrap,
      [
        "--unshare-all",
        "--die-with-parent",
        ...systemRootArgs({ etc: false }),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        process.execPath,
        "-e",
        "0",
      ],
      { env: {}, timeout: 10_000, encoding: "utf8" },
    );
    const why = (run.stderr || run.error?.message || `exit ${run.status}`).trim().split("\n")[0];
    found = run.status === 0 ? { bwrap } : { problem: `bubblewrap (${bwrap}) cannot create namespaces here: ${why}` };
  }
  probed.set(key, found);
  return found;
}

/** A folder's prefix when it is an installation's bin folder (`PREFIX/bin`), else the folder. */
function prefixOf(dir: string): string {
  return /^(sbin|bin|shims|Scripts)$/.test(path.basename(dir)) ? path.dirname(dir) : dir;
}

/** Whether showing `dir` would show the user's whole home or the root. */
function tooWide(dir: string): boolean {
  const home = process.env.HOME;
  return dir === "/" || (home !== undefined && home !== "" && (home === dir || home.startsWith(`${dir}/`)));
}

/**
 * The folders a command needs to be visible read-only beyond the system: its program and every
 * link on the way to it (an installation's prefix, a venv with the interpreter it was made
 * from), the folders of the other words that name files, and the installations on PATH.
 */
export function programPaths(command: readonly string[], cwd: string, pathEnv: string | undefined): string[] {
  const out = new Set<string>();
  const add = (dir: string) => {
    const prefix = prefixOf(dir);
    if (!tooWide(prefix)) out.add(prefix);
    else if (!tooWide(dir)) out.add(dir);
  };
  const follow = (file: string) => {
    for (let hop = 0, at = file; hop < 16; hop++) {
      add(path.dirname(at));
      const cfg = path.join(path.dirname(path.dirname(at)), "pyvenv.cfg");
      if (existsSync(cfg)) {
        const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(cfg, "utf8"))?.[1]?.trim();
        if (home) add(home);
      }
      let next: string;
      try {
        next = readlinkSync(at);
      } catch {
        break;
      }
      at = path.resolve(path.dirname(at), next);
    }
    try {
      add(path.dirname(realpathSync(file)));
    } catch {
      // A program that is not there: the spawn reports it.
    }
  };
  const [first, ...rest] = command;
  if (first !== undefined) {
    const program = first.includes("/") ? path.resolve(cwd, first) : onPath(first, pathEnv);
    if (program !== null) follow(program);
  }
  for (const word of rest) {
    if (!word.includes("/")) continue;
    const file = path.resolve(cwd, word);
    if (existsSync(file)) add(path.dirname(file));
  }
  for (const dir of (pathEnv ?? "").split(":")) if (dir !== "" && existsSync(dir)) add(dir);
  return [...out];
}

/**
 * What a sandbox whose working folder is `cwd` hides of the runs: the folder below `cwd` that
 * holds the run directory (`--out runs`: every run's folder), else the run directory itself.
 */
export function runsFolder(runDir: string, cwd: string): string {
  const first = path.relative(cwd, runDir).split(path.sep)[0];
  return first === undefined || first === "" || first === ".." || path.isAbsolute(first)
    ? runDir
    : path.join(cwd, first);
}

/** Whether `inner` is `outer` or lies below it. */
const within = (inner: string, outer: string) =>
  inner === outer || inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`);

/** The command line that runs `argv` in the sandbox `options` describes. */
export function sandboxCommand(options: SandboxOptions, argv: readonly string[]): [string, ...string[]] {
  const { limits } = options;
  const args = [
    "--unshare-all",
    ...(options.network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    ...systemRootArgs({ etc: true }),
  ];
  args.push("--proc", "/proc", "--dev", "/dev", "--size", String(limits.diskMb * 1024 * 1024), "--tmpfs", "/tmp");
  // Outer folders first, so that a folder inside another stays visible.
  const shown = [...new Set([...options.readOnly, options.cwd])]
    .filter((p) => existsSync(p))
    .sort((a, b) => a.length - b.length);
  const kept = shown.filter(
    (p, i) => !shown.slice(0, i).some((q) => within(p, q)) && !/^\/(usr|etc|opt|proc|dev)(\/|$)/.test(p),
  );
  for (const p of kept) args.push("--ro-bind", p, p);
  // Each hidden folder once, and none inside another (already gone with it).
  const hidden = [...new Set(options.hidden ?? [])].sort((a, b) => a.length - b.length);
  for (const [i, p] of hidden.entries())
    if (kept.some((q) => within(p, q)) && !hidden.slice(0, i).some((q) => within(p, q))) args.push("--tmpfs", p);
  for (const [host, inside] of options.bind ?? []) args.push("--bind", host, inside);
  // The environment goes in bwrap's own (spawn it with options.env alone), never on its command
  // line, which every user can read in /proc/PID/cmdline.
  args.push("--chdir", options.cwd, "--");
  return [options.bwrap, ...args, ...argv];
}

/** The words that run a command under the limits' rlimits (inside the sandbox, where prlimit is the system's). */
export function rlimitPrefix(limits: SandboxLimits): string[] {
  const mb = 1024 * 1024;
  return [
    PRLIMIT,
    `--cpu=${limits.cpuS}:${limits.cpuS + 1}`,
    `--data=${limits.memoryMb * mb}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.diskMb * mb}`,
    "--core=0",
    "--",
  ];
}

/** A spec's sandbox settings (the plan's `sandbox` of an agent or subprocess env). */
export interface SandboxSettings {
  readonly mode: "auto" | "required" | "off";
  readonly network: boolean;
  readonly cpu_s: number;
  readonly memory_mb: number;
  readonly processes: number;
  readonly disk_mb: number;
  readonly output_bytes: number;
}

export const limitsOf = (s: SandboxSettings): SandboxLimits => ({
  cpuS: s.cpu_s,
  memoryMb: s.memory_mb,
  processes: s.processes,
  diskMb: s.disk_mb,
});

/** Whether episodes under `settings` run sandboxed here: the bubblewrap to use, none, or why a required sandbox cannot be made. */
export function sandboxFor(
  settings: SandboxSettings,
): { readonly bwrap: string } | { readonly none: true } | { readonly refusal: string } {
  if (settings.mode === "off") return { none: true };
  const support = sandboxSupport();
  if ("bwrap" in support) return support;
  return settings.mode === "required"
    ? { refusal: `${support.problem}, and the env's sandbox is required: ${INSTALL_HINT}` }
    : { none: true };
}

const INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap) where user namespaces are allowed, or set sandbox { mode: off } to run unisolated";

/** The variables of the host's environment a sandboxed program keeps (besides its episode's). */
const KEPT = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "VIRTUAL_ENV", "PYTHONPATH", "NODE_PATH"];

/** The environment of a sandboxed program: PATH and the locale, HOME and TMPDIR its /tmp, and `own`. */
export function sandboxEnv(own: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of KEPT) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, HOME: "/tmp", TMPDIR: "/tmp", ...own };
}

/** Exit statuses of a sandboxed process killed by a signal: 128 + its number. */
const SIGNALS: Readonly<Record<number, string>> = { 9: "SIGKILL", 24: "SIGXCPU", 25: "SIGXFSZ" };

/** What a sandboxed command's exit says about its limits, or undefined. */
export function limitHit(
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
  limits: SandboxLimits,
): string | undefined {
  const killed = signal ?? (code !== null && code > 128 ? SIGNALS[code - 128] : undefined);
  if (killed === "SIGXCPU") return `used up its CPU time limit (cpu_s ${limits.cpuS})`;
  if (killed === "SIGXFSZ" || /No space left on device|File too large/i.test(stderr))
    return `used up its disk limit (disk_mb ${limits.diskMb}: the sandbox's /tmp and the largest file it may write)`;
  if (/MemoryError|Cannot allocate memory|out of memory|bad_alloc|Reached heap limit/i.test(stderr))
    return `used up its memory limit (memory_mb ${limits.memoryMb} per process)`;
  if (/Resource temporarily unavailable|BlockingIOError.*Errno 11|fork: retry|Cannot fork/i.test(stderr))
    return `used up its process limit (processes ${limits.processes})`;
  return undefined;
}

/** What a run of an env with `settings` meets on this machine: a refusal (required), a warning (auto), or nothing. */
export function sandboxHostCheck(settings: SandboxSettings): { refusal?: string; warning?: string } {
  if (settings.mode === "off") return {};
  const support = sandboxSupport();
  if ("bwrap" in support) return {};
  if (settings.mode === "required")
    return {
      refusal: `the env's episodes must run sandboxed (sandbox { mode: required }), but ${support.problem}; ${INSTALL_HINT}`,
    };
  return {
    warning: `the env's episodes run unisolated: ${support.problem}, so each episode can read the other episodes' processes and keys, your files and the network (docs/envs.md#what-an-episode-can-reach); ${INSTALL_HINT}`,
  };
}
