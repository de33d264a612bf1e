// The script the sandbox process runs (written into the scratch folder as runner.mjs). It reads
// one job from stdin, {name, source, inputs: [JSON text of one call's arguments], timeoutMs},
// and answers JSON lines on stdout:
//   {"ready":true,"permission":bool}  at start (permission: Node's permission model is on)
//   {"load":true}                     about to evaluate the candidate's code
//   {"loadError":"..."}               the code did not load (syntax error, threw, missing function)
//   {"begin":i} / {"result":i,"data":"<JSON text>"}   one per test; data is {"value":V} or {"error":"..."}
//   {"done":true}                     all tests ran
//   {"fatal":"..."}                   the runner itself failed (a sandbox failure, not the code's)
// The candidate runs in a fresh node:vm context, a new one for each test: plain JavaScript builtins only (no require,
// process, import, fetch, console, WebAssembly, SharedArrayBuffer, Atomics), no code generation
// from strings, microtasks drained inside the time limit. Only strings cross the boundary:
// inputs go in as JSON text parsed inside the context, results come out as JSON text built by
// intrinsics captured before the candidate's code ran; expected values never enter the process.
// Exceptions the candidate throws are described inside the context, under the time limit.
//
// (Kept free of backticks and dollar-brace so that it can live in this template literal.)
export const RUNNER_SOURCE = String.raw`import vm from "node:vm";
import { writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { types } from "node:util";

const send = (message) => { writeSync(1, JSON.stringify(message) + "\n"); };
process.on("unhandledRejection", () => {});

function fatal(error) {
  try { send({ fatal: String((error && error.stack) || error).slice(0, 800) }); } finally { process.exit(70); }
}

// The harness inside the context. __NAME__ is replaced by the function's (validated) name.
function driver(key, inputsText) {
  "use strict";
  const g = globalThis;
  const parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray, apply = Reflect.apply;
  const defineProperty = Object.defineProperty, freeze = Object.freeze, toStr = String, isFinite = Number.isFinite;
  const strSlice = String.prototype.slice;
  for (const name of ["console", "WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "WeakRef"]) delete g[name];
  const inputs = parse(inputsText);
  const cut = (s, n) => (s.length > n ? apply(strSlice, s, [0, n]) + "..." : s);
  const lookup = () => (typeof __NAME__ === "function" ? __NAME__ : undefined);
  function describe(e) {
    try {
      if (typeof e === "object" && e !== null) {
        const name = e.name, message = e.message;
        if (typeof name === "string" && typeof message === "string") return cut(name + ": " + message, 300);
      }
      return cut("threw " + toStr(e), 300);
    } catch (inner) {
      return "threw an exception";
    }
  }
  function enc(v, depth) {
    const t = typeof v;
    if (t === "number") return isFinite(v) ? (v === 0 ? 0 : v) : { __proto__: null, $: toStr(v) };
    if (t === "string") return v.length > 200 ? { __proto__: null, $: "string", text: apply(strSlice, v, [0, 200]) } : v;
    if (t === "boolean") return v;
    if (t === "undefined") return { __proto__: null, $: "undefined" };
    if (t === "bigint") return { __proto__: null, $: "bigint", text: toStr(v) };
    if (t === "symbol") return { __proto__: null, $: "symbol" };
    if (t === "function") return { __proto__: null, $: "function" };
    if (v === null) return null;
    if (isArray(v)) {
      if (depth >= 3) return { __proto__: null, $: "array" };
      const n = v.length;
      const m = n > 100 ? 100 : n;
      const items = [];
      for (let i = 0; i < m; i++) defineProperty(items, i, { value: enc(v[i], depth + 1), writable: true, enumerable: true, configurable: true });
      return n > 100 ? { __proto__: null, $: "array", length: n, items } : items;
    }
    return { __proto__: null, $: "object" };
  }
  const api = freeze({
    __proto__: null,
    check() {
      return lookup() === undefined ? "the code does not define a function named __NAME__" : "";
    },
    run(i) {
      const f = lookup();
      if (f === undefined) return stringify({ __proto__: null, error: "__NAME__ is not a function" });
      const args = parse(inputs[i]);
      let v;
      try {
        v = apply(f, undefined, args);
      } catch (e) {
        return stringify({ __proto__: null, error: describe(e) });
      }
      let out;
      try {
        out = enc(v, 0);
      } catch (e) {
        return stringify({ __proto__: null, error: "its result could not be read: " + describe(e) });
      }
      return stringify({ __proto__: null, value: out });
    },
    describe(e) {
      return describe(e);
    },
  });
  defineProperty(g, key, { value: api, writable: false, enumerable: false, configurable: false });
}

function syntaxMessage(e) {
  if (!(e instanceof Error)) return "the code could not be compiled";
  const line = /solution\.js:(\d+)/.exec(String(e.stack || ""));
  return (e.name + ": " + e.message).slice(0, 300) + (line ? " (line " + line[1] + ")" : "");
}

/** A description of what the candidate's code threw, without running its code outside the limit. */
/** vm's timeout error (made in the context's realm): read its own data property, run no getters. */
function isTimeout(e) {
  if (typeof e !== "object" || e === null || types.isProxy(e) || !types.isNativeError(e)) return false;
  const code = Object.getOwnPropertyDescriptor(e, "code");
  return code !== undefined && "value" in code && code.value === "ERR_SCRIPT_EXECUTION_TIMEOUT";
}

function thrownMessage(e, ctx, sandbox, key, timeout) {
  if (isTimeout(e)) return "time limit exceeded (" + timeout + " ms)";
  const hostError = typeof e === "object" && e !== null && !types.isProxy(e) && e instanceof Error;
  if (hostError) return (e.name + ": " + e.message).slice(0, 300);
  if (typeof e !== "object" && typeof e !== "function") return ("threw " + String(e)).slice(0, 300);
  const slot = "__arl_e" + randomBytes(8).toString("hex");
  try {
    Object.defineProperty(sandbox, slot, { value: e, writable: false, enumerable: false, configurable: true });
    const text = vm.runInContext(key + ".describe(" + slot + ")", ctx, { timeout, displayErrors: false });
    return typeof text === "string" ? text : "threw an exception";
  } catch (inner) {
    return isTimeout(inner) ? "time limit exceeded (" + timeout + " ms)" : "threw an exception";
  } finally {
    try { delete sandbox[slot]; } catch (ignored) {}
  }
}

/**
 * A fresh context with the harness and the candidate's code loaded: { ctx, sandbox } or { error }.
 * Each test gets its own, so that nothing a test leaves behind (variables, patched prototypes)
 * reaches the next one: a candidate cannot pass a test by remembering an earlier one.
 */
function load(script, prelude, key, timeout) {
  const sandbox = Object.create(null);
  const ctx = vm.createContext(sandbox, { name: "solution", codeGeneration: { strings: false, wasm: false }, microtaskMode: "afterEvaluate" });
  vm.runInContext(prelude, ctx, { filename: "harness.js" });
  try {
    script.runInContext(ctx, { timeout, displayErrors: false });
  } catch (e) {
    return { error: isTimeout(e) ? "time limit exceeded (" + timeout + " ms) while loading the code" : "the code threw while loading: " + thrownMessage(e, ctx, sandbox, key, timeout) };
  }
  let missing;
  try {
    missing = vm.runInContext(key + ".check()", ctx, { timeout, displayErrors: false });
  } catch (e) {
    missing = thrownMessage(e, ctx, sandbox, key, timeout);
  }
  if (typeof missing !== "string") missing = "the code could not be checked";
  return missing ? { error: missing } : { ctx, sandbox };
}

function main(job) {
  const timeout = job.timeoutMs;
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(job.name)) throw new Error("bad function name");
  if (!Number.isInteger(timeout) || timeout < 1) throw new Error("bad time limit");
  const key = "__arl_" + randomBytes(12).toString("hex");
  const prelude = "(" + driver.toString().replace(/__NAME__/g, job.name) + ")(" + JSON.stringify(key) + ", " + JSON.stringify(JSON.stringify(job.inputs)) + ")";
  send({ load: true });
  if (/\bimport\b/.test(job.source)) {
    send({ loadError: "import is not available to the code" });
    return;
  }
  let script;
  try {
    script = new vm.Script(job.source, { filename: "solution.js" });
  } catch (e) {
    send({ loadError: syntaxMessage(e) });
    return;
  }
  const first = load(script, prelude, key, timeout);
  if (first.error) {
    send({ loadError: first.error });
    return;
  }
  for (let i = 0; i < job.inputs.length; i++) {
    send({ begin: i });
    // The first test uses the context the code was checked in; each later one loads it afresh.
    const env = i === 0 ? first : load(script, prelude, key, timeout);
    let data;
    if (env.error) data = JSON.stringify({ error: env.error });
    else {
      try {
        data = vm.runInContext(key + ".run(" + i + ")", env.ctx, { timeout, displayErrors: false });
      } catch (e) {
        data = JSON.stringify({ error: thrownMessage(e, env.ctx, env.sandbox, key, timeout) });
      }
    }
    if (typeof data !== "string") data = JSON.stringify({ error: "the test harness got no result" });
    if (data.length > 100000) data = JSON.stringify({ error: "its result is too large" });
    send({ result: i, data });
  }
  send({ done: true });
}

send({ ready: true, permission: typeof process.permission === "object" && process.permission !== null });
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  try {
    main(JSON.parse(Buffer.concat(chunks).toString("utf8")));
  } catch (error) {
    fatal(error);
  }
  process.exit(0);
});
`;
