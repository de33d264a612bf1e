// The built-in findmax env's sandbox: time and memory limits, what the code can reach (no
// require, files, processes, network, sockets or environment), fallbacks without a layer, a fresh
// context per test, and the isolation layers this machine has.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type EnvInstance } from "../../src/contracts/env.js";
import type { SandboxSwitch } from "../../src/envs/worlds/findmax/isolation.js";
import { Sandbox, sandboxLayers } from "../../src/envs/worlds/findmax/sandbox.js";
import { makeEnv, episode, step } from "../helpers/findmax.js";

/** Writes `code` as findMax's source and runs the visible tests. */
async function runCode(inst: EnvInstance, code: string): Promise<string> {
  await step(inst, "write_code", { code });
  return (await step(inst, "run_tests")).text;
}

describe("findmax sandbox", () => {
  const fast = makeEnv({ time_limit_ms: 300, memory_limit_mb: 64 });

  it("stops an infinite loop (in the function, at load, in microtasks) within the time limit", async () => {
    await episode(fast, 0, async (inst) => {
      let t0 = performance.now();
      const loop = await runCode(inst, "function findMax(arr) {\n  while (true) {}\n}\n");
      const perTest = (performance.now() - t0) / 3;
      expect(loop.split("\n")[0]).toBe("0 of 3 tests pass.");
      expect(loop.match(/time limit exceeded \(300 ms\)/g)).toHaveLength(3);
      // ~300 ms a test (the vm's watchdog) plus a share of the process start (slow on a loaded machine).
      expect(perTest).toBeLessThan(300 + 1500);

      t0 = performance.now();
      const top = await runCode(inst, "for (;;) {}\nfunction findMax(arr) { return arr[0]; }\n");
      expect(top).toBe("0 of 3 tests pass. The code did not load: time limit exceeded (300 ms) while loading the code");
      expect(performance.now() - t0).toBeLessThan(300 + 4000);

      const micro = await runCode(
        inst,
        "function findMax(arr) {\n  const go = () => Promise.resolve().then(go);\n  go();\n  return 3;\n}\n",
      );
      // An endless promise chain also allocates: whichever limit it reaches first stops it.
      expect(micro).toMatch(/time limit exceeded \(300 ms\)|memory limit exceeded \(64 MB\)/);

      const hidden = await inst.outcome();
      expect(hidden).toEqual({ tests_passed: false, pass_fraction: 0, success: false });
      // The env still works afterwards.
      expect(await runCode(inst, "function findMax(arr) { return Math.max(...arr); }")).toMatch(/^3 of 3 tests pass\./);
    });
  });

  it("stops a memory hog; memory outside the heap is capped where the OS allows it", async () => {
    const layers = await sandboxLayers();
    // A long time limit, so that the memory limit is what stops it.
    await episode(makeEnv({ time_limit_ms: 20_000, memory_limit_mb: 64 }), 0, async (inst) => {
      const hog = await runCode(
        inst,
        "function findMax(arr) {\n  const xs = [];\n  while (true) xs.push(new Array(100000).fill(1.5));\n}\n",
      );
      expect(hog.split("\n")[0]).toBe("0 of 3 tests pass.");
      expect(hog.match(/memory limit exceeded \(64 MB\)/g)).toHaveLength(3);

      const buffer = await runCode(
        inst,
        "function findMax(arr) {\n  const b = new Uint8Array(2 ** 31);\n  b.fill(1);\n  return arr[0];\n}\n",
      );
      expect(buffer.split("\n")[0]).toMatch(/^[0-3] of 3 tests pass\.$/);
      if (layers.dataLimit) expect(buffer).toContain("RangeError: Array buffer allocation failed");
      // Deep recursion is an ordinary exception.
      expect(await runCode(inst, "function findMax(arr) { return findMax(arr); }")).toContain(
        "error: RangeError: Maximum call stack size exceeded",
      );
    });
  });

  it("gives the code no require, process, fetch, import, console or eval; exceptions and syntax errors are failed runs with a message", async () => {
    await episode(fast, 0, async (inst) => {
      expect(await runCode(inst, "function findMax(arr) {\n  const fs = require('fs');\n  return 1;\n}\n")).toContain(
        "FAIL findMax([3, 1, 2]): expected 3, error: ReferenceError: require is not defined",
      );
      expect(await runCode(inst, "function findMax(arr) {\n  process.exit(0);\n}\n")).toContain(
        "error: ReferenceError: process is not defined",
      );
      expect(
        await runCode(inst, "function findMax(arr) {\n  fetch('http://127.0.0.1:9/');\n  return arr[0];\n}\n"),
      ).toContain("error: ReferenceError: fetch is not defined");
      expect(await runCode(inst, "function findMax(arr) {\n  import('node:fs');\n  return 3;\n}\n")).toBe(
        "0 of 3 tests pass. The code did not load: import is not available to the code",
      );
      const globals = await runCode(
        inst,
        "function findMax(arr) {\n  const t = { require: typeof require, process: typeof process, fetch: typeof fetch, console: typeof console, WebAssembly: typeof WebAssembly, SharedArrayBuffer: typeof SharedArrayBuffer, Atomics: typeof Atomics, module: typeof module, Buffer: typeof Buffer, setTimeout: typeof setTimeout, XMLHttpRequest: typeof XMLHttpRequest };\n  const found = Object.keys(t).filter((k) => t[k] !== 'undefined');\n  return found.length ? found.join(' ') : 'none';\n}\n",
      );
      expect(globals).toContain('FAIL findMax([3, 1, 2]): expected 3, got "none"');
      expect(await runCode(inst, "function findMax(arr) {\n  return eval('arr[0]');\n}\n")).toContain(
        "error: EvalError: Code generation from strings disallowed for this context",
      );
      expect(await runCode(inst, "function findMax(arr) {\n  return Function('return 1')();\n}\n")).toContain(
        "error: EvalError",
      );

      const syntax = await runCode(inst, "function findMax(arr) {\n  let best = ;\n  return best;\n}\n");
      expect(syntax).toBe("0 of 3 tests pass. The code did not load: SyntaxError: Unexpected token ';' (line 2)");
      expect(await runCode(inst, "function findMax(arr) {\n  throw new TypeError('no');\n}\n")).toContain(
        "FAIL findMax([0]): expected 0, error: TypeError: no",
      );
      expect(
        await runCode(inst, "function findMax(arr) {\n  throw { toString() { while (true) {} } };\n}\n"),
      ).toContain("error: time limit exceeded (300 ms)");
      expect(await runCode(inst, "function findMin(arr) { return 0; }")).toBe(
        "0 of 3 tests pass. The code did not load: the code does not define a function named findMax",
      );
      expect(await runCode(inst, "throw new Error('top');")).toBe(
        "0 of 3 tests pass. The code did not load: the code threw while loading: Error: top",
      );
      // Odd return values are shown, not crashes.
      expect(await runCode(inst, "function findMax(arr) { return [undefined, NaN, 1n, {}, () => 1]; }")).toContain(
        "got [undefined, NaN, 1n, an object, a function]",
      );
      // An arrow function bound with const counts as the function.
      expect(await runCode(inst, "const findMax = (arr) => arr.reduce((a, b) => (b > a ? b : a));\n")).toMatch(
        /^3 of 3 tests pass\./,
      );
    });
  });

  it("cannot read a file outside its scratch folder by any route we know of", async () => {
    // Each route is one candidate: findMax returns "=" and what it got, or "!" and the error's name.
    const routes: Record<string, string> = {
      require: 'require("fs").readFileSync("/etc/passwd", "utf8")',
      binding: 'process.binding("fs")',
      mainModule: 'process.mainModule.require("fs").readFileSync("/etc/passwd", "utf8")',
      globalCtor:
        'globalThis.constructor.constructor("return process")().mainModule.require("fs").readFileSync("/etc/passwd", "utf8")',
      argCtor: 'arr.constructor.constructor("return process")()',
      asyncCtor: '(async function () {}).constructor("return process")()',
      eval: 'eval("process")',
      // The word import anywhere in the source is refused before the code runs; built at run time
      // it needs eval, which the context forbids.
      importCall: '(0, eval)("imp" + "ort(\'fs\')")',
      callsites: `(() => {
    Error.prepareStackTrace = (e, sites) => sites;
    const sites = new Error("x").stack;
    Error.prepareStackTrace = undefined;
    for (const s of sites) {
      const t = s.getThis();
      const fn = s.getFunction();
      for (const F of [t && t.constructor && t.constructor.constructor, fn && fn.constructor]) {
        if (typeof F === "function") {
          const p = F("return process")();
          if (p) return p.mainModule.require("fs").readFileSync("/etc/passwd", "utf8");
        }
      }
    }
    return "no host frames";
  })()`,
      caller: "String(findMax.caller)",
      wasm: "new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))",
      fetch: 'fetch("file:///etc/passwd")',
      thisGlobal:
        'Object.getOwnPropertyNames(globalThis).filter((k) => /process|require|fetch|fs/.test(k)).join(",") || "none"',
    };
    const got: Record<string, string> = {};
    await episode(fast, 0, async (inst) => {
      for (const [label, expr] of Object.entries(routes)) {
        const code = `function findMax(arr) {\n  try {\n    const v = ${expr};\n    return "=" + (typeof v === "string" ? v.slice(0, 30) : typeof v);\n  } catch (e) {\n    return "!" + (e && e.name);\n  }\n}\n`;
        const text = await runCode(inst, code);
        expect(text).not.toContain("root:");
        got[label] = /FAIL findMax\(\[3, 1, 2\]\): expected 3, got "([^"]*)"/.exec(text)?.[1] ?? text;
      }
    });
    expect(got).toEqual({
      require: "!ReferenceError",
      binding: "!ReferenceError",
      mainModule: "!ReferenceError",
      globalCtor: expect.stringMatching(/^!(TypeError|EvalError)$/),
      argCtor: "!EvalError",
      asyncCtor: "!EvalError",
      eval: "!EvalError",
      importCall: "!EvalError",
      callsites: expect.stringMatching(/^(=no host frames|!EvalError|!TypeError)$/),
      caller: expect.stringMatching(/^(=null|!TypeError)$/),
      wasm: "!ReferenceError",
      fetch: "!ReferenceError",
      thisGlobal: "=none",
    });
  });

  it("even code that escaped the vm context could not read outside the scratch folder, start processes, reach the network or see our environment", async () => {
    const layers = await sandboxLayers();
    const sandbox = await Sandbox.create({ timeLimitMs: 1000, memoryLimitMb: 64 });
    try {
      const script = String.raw`import fs from "node:fs";
import cp from "node:child_process";
import net from "node:net";
const r = {};
const t = (k, f) => { try { r[k] = String(f()).slice(0, 300); } catch (e) { r[k] = "!" + (e.code || e.name); } };
t("passwd", () => fs.readFileSync("/etc/passwd", "utf8"));
t("parent", () => fs.readdirSync(".."));
t("own", () => fs.readdirSync(".").join(","));
t("write", () => fs.writeFileSync("x.txt", "x"));
t("spawn", () => cp.execFileSync("/bin/cat", ["/etc/passwd"]));
t("env", () => Object.keys(process.env).filter((k) => k !== "PWD").length);
t("cwd", () => process.cwd());
r.permission = typeof process.permission === "object";
const s = net.connect({ host: "1.1.1.1", port: 80 });
const done = (v) => { r.net = v; process.stdout.write(JSON.stringify(r)); process.exit(0); };
s.on("connect", () => done("connected"));
s.on("error", (e) => done("!" + e.code));
setTimeout(() => done("timeout"), 3000);
`;
      const out = await sandbox.probe(script);
      const r = JSON.parse(out.stdout) as Record<string, unknown>;
      expect(r.env).toBe("0");
      expect(r.own).toContain("probe.mjs");
      expect(r.cwd).toBe(sandbox.dir);
      if (layers.permission) {
        expect(r.permission).toBe(true);
        expect(r.passwd).toBe("!ERR_ACCESS_DENIED");
        expect(r.parent).toBe("!ERR_ACCESS_DENIED");
        expect(r.write).toBe("!ERR_ACCESS_DENIED");
        expect(r.spawn).toBe("!ERR_ACCESS_DENIED");
      }
      // Without a network namespace (and Node 20 has no network permission) only the vm layer
      // keeps the code off the network.
      if (layers.networkNamespace) expect(r.net).toMatch(/^!(ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)$/);
    } finally {
      await sandbox.close();
    }
    expect(existsSync(sandbox.dir)).toBe(false);
  });

  it("even code that escaped the vm context cannot reach a unix socket by path or signal a process outside (mount and PID namespaces, from bubblewrap or else unshare)", async () => {
    const layers = await sandboxLayers();
    const outside = mkdtempSync(path.join(os.tmpdir(), "arl-outside-"));
    const socketPath = path.join(outside, "listening.sock");
    let accepted = 0;
    const server = net.createServer((c) => {
      accepted++;
      c.end("hello from outside");
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const victim = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    const escape = (signal: number | string) => String.raw`import net from "node:net";
const r = {};
try { process.kill(${victim.pid}, ${JSON.stringify(signal)}); r.kill = "sent"; } catch (e) { r.kill = "!" + e.code; }
const s = net.connect(${JSON.stringify(socketPath)});
const done = (v) => { r.socket = v; process.stdout.write(JSON.stringify(r)); process.exit(0); };
s.on("data", (d) => done("read " + d));
s.on("error", (e) => done("!" + e.code));
setTimeout(() => done("timeout"), 3000);
`;
    const run = async (without: readonly SandboxSwitch[], signal: number | string) => {
      const sandbox = await Sandbox.create({ timeLimitMs: 1000, memoryLimitMb: 64 }, without);
      try {
        return JSON.parse((await sandbox.probe(escape(signal))).stdout) as { kill: string; socket: string };
      } finally {
        await sandbox.close();
      }
    };
    // Where this machine can make user, mount and PID namespaces, unshare closes the holes
    // without bubblewrap; where bubblewrap works, it closes them itself.
    const unshareWorks = spawnSync("unshare", ["-r", "-m", "-p", "-f", "--mount-proc", "true"]).status === 0;
    const tools: (readonly SandboxSwitch[])[] = [
      ...(unshareWorks ? [["bwrap"] as const] : []),
      ...(layers.namespaces ? [[] as const] : []),
    ];
    try {
      // Without the layer the holes are real (signal 0 only asks whether the process is there).
      const open = await run(["namespaces"], 0);
      expect(open).toEqual({ kill: "sent", socket: "read hello from outside" });
      if (unshareWorks) expect(layers.namespaces).toBe(true);
      if (tools.length === 0)
        console.warn(
          "findmax sandbox: neither bubblewrap nor unshare can make namespaces here: code that escapes the vm context could reach unix sockets by path and signal processes outside",
        );
      for (const without of tools) {
        const before = accepted;
        const closed = await run(without, "SIGKILL");
        expect(closed.kill, `without ${without.join()}`).toBe("!ESRCH");
        expect(closed.socket, `without ${without.join()}`).toMatch(/^!(ENOENT|EACCES|ECONNREFUSED)$/);
        expect(accepted).toBe(before);
        expect(victim.exitCode).toBeNull();
        expect(victim.signalCode).toBeNull();
      }
    } finally {
      victim.kill("SIGKILL");
      server.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("falls back cleanly without the permission model, the network namespace and the rlimit: the vm layer still holds", async () => {
    const sandbox = await Sandbox.create({ timeLimitMs: 500, memoryLimitMb: 64 }, [
      "permission",
      "networkNamespace",
      "dataLimit",
      "namespaces",
    ]);
    try {
      const probe = await sandbox.probe('process.stdout.write(String(typeof process.permission === "object"));');
      expect(probe.stdout).toBe("false");
      const ok = await sandbox.run("f", "function f(a) { return a.length; }", [[[1, 2, 3]], [[]]]);
      expect(ok).toEqual({
        results: [
          { ok: true, value: 3 },
          { ok: true, value: 0 },
        ],
      });
      const escape = await sandbox.run(
        "f",
        'function f(a) { try { return a.constructor.constructor("return process")().pid; } catch (e) { return e.name; } }',
        [[[1]]],
      );
      expect(escape).toEqual({ results: [{ ok: true, value: "EvalError" }] });
      const loop = await sandbox.run("f", "function f(a) { for (;;) {} }", [[[1]]]);
      expect(loop).toEqual({ results: [{ ok: false, error: "time limit exceeded (500 ms)" }] });
    } finally {
      await sandbox.close();
    }
  });

  it("gives each test a fresh context: no state or patched prototype survives from one test to the next", async () => {
    const sandbox = await Sandbox.create({ timeLimitMs: 1000, memoryLimitMb: 64 });
    try {
      const counter = await sandbox.run("f", "let calls = 0;\nfunction f(a) { calls += 1; return calls; }", [
        [[1]],
        [[2]],
        [[3]],
      ]);
      expect(counter).toEqual({ results: [1, 1, 1].map((value) => ({ ok: true, value })) });
      const remembers = await sandbox.run(
        "f",
        "function f(a) { const seen = Array.prototype.__seen || []; seen.push(a[0]); Array.prototype.__seen = seen; Object.prototype.hacked = true; return seen.length + ':' + ({}).hacked; }",
        [[[1]], [[2]]],
      );
      expect(remembers).toEqual({
        results: [
          { ok: true, value: "1:true" },
          { ok: true, value: "1:true" },
        ],
      });
      // globalThis too.
      const global = await sandbox.run(
        "f",
        "function f(a) { const before = globalThis.previous; globalThis.previous = a[0]; return before === undefined ? 'fresh' : 'saw ' + before; }",
        [[[1]], [[2]]],
      );
      expect(global).toEqual({
        results: [
          { ok: true, value: "fresh" },
          { ok: true, value: "fresh" },
        ],
      });
    } finally {
      await sandbox.close();
    }
  });

  it("reports which isolation layers this machine has (Node 20.20 on Linux: all of them)", async () => {
    const layers = await sandboxLayers();
    expect(Object.keys(layers).sort()).toEqual(["dataLimit", "namespaces", "networkNamespace", "permission"]);
    if (process.platform === "linux" && /^v20\./.test(process.version))
      expect(layers.permission).toBe("--experimental-permission");
  });
});
