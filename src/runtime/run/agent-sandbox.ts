// An agent episode's sandbox (docs/envs.md#what-an-episode-can-reach): the program runs under
// bubblewrap (src/contracts/sandbox.ts) in its own network namespace, where only loopback
// exists. The run's gateway is reached through a unix socket that serves this episode's session
// alone, bound into the sandbox; a small forwarder inside listens on the sandbox's 127.0.0.1 at
// the gateway's port and passes each connection to that socket, so the URLs the program gets
// are the usual ones. The forwarder then starts the program under the episode's rlimits and
// exits with its status. The program's stdin, stdout and stderr are arl's pipes, handed to the
// forwarder on fds 3 to 5 and never as its own stdio: Node makes its stdio non-blocking once it
// touches it (it does when serving a connection), and the program, sharing those open files,
// would then fail to write (EAGAIN) whenever arl reads slower than it writes: a flood of output
// ended as "exited with code 120" rather than at sandbox.output_bytes.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  limitsOf,
  programPaths,
  rlimitPrefix,
  sandboxCommand,
  sandboxEnv,
  type SandboxSettings,
} from "../../contracts/sandbox.js";
import { episodeCgroup } from "../../contracts/sandbox-cgroup.js";

/** Where the episode's socket folder is bound inside the sandbox. */
const INSIDE = "/run/arl";

/**
 * The forwarder: argv = [socket, port, program, ...args], the program's stdin, stdout and stderr
 * on fds 3, 4 and 5 (STDIO_MOVED); exits with the program's status (128 + signal when killed).
 */
const FORWARDER = `const net = require("node:net"), { spawn } = require("node:child_process"), os = require("node:os"), fs = require("node:fs");
const [socket, port, ...command] = process.argv.slice(1);
const server = net.createServer((c) => {
  const up = net.connect(socket);
  c.on("error", () => up.destroy());
  up.on("error", () => c.destroy());
  c.pipe(up).pipe(c);
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command[0], command.slice(1), { stdio: [3, 4, 5] });
  child.on("error", (e) => { fs.writeSync(5, "could not start " + command[0] + ": " + e.message + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 9)));
});`;

/** Starts "$@" (the forwarder) with the program's stdio moved to fds 3 to 5 and its own on /dev/null. */
const STDIO_MOVED = ["/bin/sh", "-c", 'exec "$@" 3<&0 4>&1 5>&2 </dev/null >/dev/null 2>/dev/null', "sh"];

/** A sandboxed episode's way to the gateway and its command line. */
export interface AgentSandbox {
  /** The host path of the socket the episode's session is served on; undefined with the host's network. */
  readonly socket: string | undefined;
  /** The command that runs the program in the sandbox (spawned with `env`'s sandboxEnv as its whole environment). */
  command(program: readonly string[], cwd: string, env: Readonly<Record<string, string>>): [string, ...string[]];
  /** Removes the socket's folder. */
  dispose(): void;
}

/** The sandbox of one agent episode; `gatewayOrigin` gives the port the forwarder listens on, `hidden` what the program must not see. */
export function agentSandbox(
  bwrap: string,
  settings: SandboxSettings,
  gatewayOrigin: string,
  hidden: readonly string[],
): AgentSandbox {
  const dir = mkdtempSync(path.join(os.tmpdir(), "arl-episode-"));
  const socket = path.join(dir, "gateway.sock");
  const port = new URL(gatewayOrigin).port;
  const limits = limitsOf(settings);
  // Root: the process limit is a pids cgroup's (RLIMIT_NPROC does not bind root).
  const cgroup = episodeCgroup(limits.processes);
  const inCgroup = (argv: [string, ...string[]]): [string, ...string[]] => (cgroup ? cgroup.wrap(argv) : argv);
  return {
    socket: settings.network ? undefined : socket,
    command(program, cwd, env) {
      const options = {
        bwrap,
        cwd,
        readOnly: programPaths(program, cwd, process.env.PATH),
        hidden,
        bind: [[dir, INSIDE]] as const,
        network: settings.network,
        env: sandboxEnv(env),
        limits,
      };
      // With the host's network the gateway is reached as it is, over the host's loopback.
      if (settings.network) return inCgroup(sandboxCommand(options, [...rlimitPrefix(limits), ...program]));
      return inCgroup(
        sandboxCommand(options, [
          ...STDIO_MOVED,
          process.execPath,
          "-e",
          FORWARDER,
          path.join(INSIDE, "gateway.sock"),
          port,
          ...rlimitPrefix(limits),
          ...program,
        ]),
      );
    },
    dispose() {
      rmSync(dir, { recursive: true, force: true });
      cgroup?.dispose();
    },
  };
}
