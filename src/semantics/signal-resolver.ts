// Signal names in expressions: which signal `outcome.x`, `call.args.path` or `myenv.y` is, with
// its type and timing, and whether a name or value a condition compares with exists at all.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { at, defined } from "../contracts/checked.js";
import { didYouMean } from "../contracts/suggest.js";
import type * as ast from "../language/ast.js";
import { dottedName } from "../language/ast.js";
import { callSignals, episodeSignals, type RewardExpr } from "./expression-ir.js";
import type { Signal } from "./schema/env.js";
import type { Tool } from "./schema/tool.js";
import type { Origin } from "./values.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

const toolAliasSignals: Readonly<Record<string, string>> = { name: "tool", env: "env", args: "args" };

/** A tool of the experiment, as a constraint condition sees it. */
export interface ScopeTool {
  readonly name: string;
  readonly env: string | null;
  readonly definition: Tool;
}

export interface SignalScope {
  /** Each env of the experiment and the signals it declares. */
  readonly envs: ReadonlyMap<string, Readonly<Record<string, Signal>>>;
  /** Whether `call.*` (and its older spelling `tool.*`) may be used (constraint conditions). */
  readonly allowTool: boolean;
  /** The experiment's tools: `call.tool` names and `call.args.NAME` are checked against them. */
  readonly tools?: readonly ScopeTool[];
}

/** Reports one error of an expression. */
export function expressionError(
  diagnostics: Diagnostic[],
  origin: Origin,
  code: CompilerCode,
  message: string,
  hint?: string,
): void {
  diagnostics.push({
    code,
    severity: "error",
    message,
    file: origin.file,
    range: origin.range,
    ...(hint ? { hint } : {}),
  });
}

/**
 * Resolves signal names against an experiment's envs and tools. `narrowed`: the tools that
 * `call.tool == "..."` tests around the name restrict the call to, if any.
 */
export class SignalResolver {
  constructor(
    private readonly scope: SignalScope,
    private readonly diagnostics: Diagnostic[],
  ) {}

  /** Resolves a signal name in the namespaces of docs/semantics.md §2. */
  resolve(path: readonly string[], origin: Origin, narrowed: readonly string[] | undefined): RewardExpr | undefined {
    const [ns, ...rest] = path;
    const name = rest.join(".");
    const envNames = [...this.scope.envs.keys()];
    const namespaces = ["outcome", "state", "episode", "env", ...(this.scope.allowTool ? ["call"] : []), ...envNames];
    const unknown = (message: string, candidates: string[], hint?: string) => {
      this.error(origin, "unknown-signal", message, didYouMean(path[path.length - 1] ?? "", candidates) ?? hint);
      return undefined;
    };
    if (ns === undefined || rest.length === 0) {
      return unknown(
        `'${path.join(".")}' is not a signal`,
        namespaces.map((n) => `${n}.`),
        `signals are written namespace.name: ${namespaces.map((n) => `${n}.*`).join(", ")}`,
      );
    }
    let expr: RewardExpr | undefined;
    if (ns === "episode") {
      const s = episodeSignals[name];
      if (!s)
        return unknown(
          `'episode.${name}' is not a signal the harness reports`,
          Object.keys(episodeSignals),
          `episode signals: ${Object.keys(episodeSignals).join(", ")}`,
        );
      expr = { op: "signal", namespace: "episode", name, type: s.type, timing: s.timing };
    } else if (ns === "call" || ns === "tool") {
      if (!this.scope.allowTool)
        return unknown(
          `'${ns}.*' is the call a constraint judges: it can only be used in constraints`,
          [],
          "a reward reads what the env and the harness report: outcome.*, state.*, episode.*",
        );
      // `tool.name` is the older spelling of `call.tool`.
      const sub = rest[0];
      const field =
        sub === undefined ? undefined : ns === "tool" ? toolAliasSignals[sub] : callSignals[sub] ? sub : undefined;
      const fields = ns === "tool" ? Object.keys(toolAliasSignals) : Object.keys(callSignals);
      const usage = ns === "tool" ? "tool.name, tool.env or tool.args.NAME" : "call.tool, call.env or call.args.NAME";
      if (field === "args" && rest.length === 2)
        expr = this.callArgument(at(rest, 1), path.join("."), origin, narrowed);
      else if (field === "args")
        return unknown(`'${path.join(".")}': write ${ns}.args.NAME, one top-level argument of the call`, []);
      else if (field && rest.length === 1)
        expr = {
          op: "signal",
          namespace: "tool",
          name: defined(callSignals[field], `call signal ${field}`).plan,
          type: "string",
          timing: "state",
        };
      else return unknown(`'${path.join(".")}' is not known; use ${usage}`, fields);
      if (!expr) return undefined;
    } else if (ns === "outcome" || ns === "state" || ns === "env") {
      // The signal must be declared by every env of the experiment (each episode comes from one of them).
      const declared = [...this.scope.envs].map(([env, signals]) => ({ env, signal: signals[name] }));
      const missing = declared.filter((d) => !d.signal || (ns !== "env" && d.signal.scope !== ns));
      if (declared.length === 0)
        return unknown(`'${path.join(".")}' needs an env that declares it, and the experiment has none`, []);
      if (missing.length > 0) {
        const all = new Set<string>();
        for (const [, signals] of this.scope.envs)
          for (const [k, s] of Object.entries(signals)) if (ns === "env" || s.scope === ns) all.add(k);
        const which = missing.map((m) => m.env).join(", ");
        const otherScope = missing.flatMap((m) =>
          m.signal && m.signal.scope !== ns ? [{ env: m.env, signal: m.signal }] : [],
        )[0];
        const message = otherScope
          ? `'${path.join(".")}': env '${otherScope.env}' declares '${name}' as a ${otherScope.signal.scope} signal; write ${otherScope.signal.scope}.${name}`
          : `'${path.join(".")}' is not a signal of env ${which}`;
        return unknown(message, [...all], all.size > 0 ? `${ns} signals: ${[...all].join(", ")}` : undefined);
      }
      // None is missing: every env declares it.
      const signals = declared.flatMap((d) => (d.signal ? [d.signal] : []));
      const first = at(signals, 0);
      // Known after every step if any env reports it per step: the order of envs must not matter.
      const timing = signals.some((s) => s.scope === "state") ? "state" : "outcome";
      expr = { op: "signal", namespace: ns, name, type: first.type, timing };
    } else if (this.scope.envs.has(ns)) {
      const signals = defined(this.scope.envs.get(ns), `the signals of env ${ns}`);
      const s = signals[name];
      if (!s)
        return unknown(
          `env '${ns}' declares no signal '${name}'`,
          Object.keys(signals),
          Object.keys(signals).length ? `its signals: ${Object.keys(signals).join(", ")}` : undefined,
        );
      expr = { op: "signal", namespace: "named_env", env: ns, name, type: s.type, timing: s.scope };
    } else {
      return unknown(`unknown signal namespace '${ns}'`, namespaces, `namespaces: ${namespaces.join(", ")}`);
    }
    if (this.scope.allowTool && expr.op === "signal" && expr.timing === "outcome") {
      // The gate runs before each call, mid-episode: an outcome is not known yet.
      this.error(
        origin,
        "outcome-in-constraint",
        `'${path.join(".")}' is known only when the episode has ended, but a constraint is judged before each call`,
        "judge the call itself (call.tool, call.args.NAME) or a signal the env reports after every step (state.*); score outcomes in the reward",
      );
      return undefined;
    }
    return expr;
  }

  /**
   * `call.tool == "X"` names a tool of the experiment, `call.env == "X"` an env of the
   * experiment: a misspelt name would make the constraint silently never apply.
   */
  knownCallValue(
    side: RewardExpr,
    other: ast.Expression,
    file: string,
    narrowed: readonly string[] | undefined,
  ): boolean {
    if (side.op !== "signal" || side.namespace !== "tool" || !this.scope.tools) return true;
    const origin: Origin = { file, range: other.range };
    if (
      side.name.startsWith("args.") &&
      (other.kind === "String" || other.kind === "Number" || other.kind === "Boolean")
    ) {
      // An argument with an enum can only take those values: another one means the test never holds.
      const name = side.name.slice("args.".length);
      const params = this.scope.tools
        .filter((t) => !narrowed || narrowed.includes(t.name))
        .flatMap((t) => t.definition.parameters[name] ?? []);
      const allowed = params.every((p) => p.enum !== undefined)
        ? [...new Set(params.flatMap((p) => p.enum ?? []))]
        : undefined;
      if (params.length > 0 && allowed && !allowed.includes(other.value)) {
        const shown = allowed.map((v) => JSON.stringify(v));
        this.error(
          origin,
          "impossible-argument-value",
          `call.args.${name} is one of ${shown.join(", ")}, never ${JSON.stringify(other.value)}: this test never holds`,
          didYouMean(String(other.value), allowed.map(String)) ?? `its values: ${shown.join(", ")}`,
        );
        return false;
      }
      return true;
    }
    if (other.kind !== "String") return true;
    const written = other.value;
    if (side.name === "name" && !this.scope.tools.some((t) => t.name === written)) {
      const names = this.scope.tools.map((t) => t.name);
      this.error(
        origin,
        "unknown-tool",
        `the experiment has no tool '${written}'`,
        didYouMean(written, names) ??
          (names.length ? `its tools: ${[...new Set(names)].join(", ")}` : "the experiment declares no tools"),
      );
      return false;
    }
    if (side.name === "env" && written !== "" && !this.scope.envs.has(written)) {
      const names = [...this.scope.envs.keys()];
      this.error(
        origin,
        "unknown-env",
        `the experiment has no env '${written}'`,
        didYouMean(written, names) ?? `its envs: ${names.join(", ")}`,
      );
      return false;
    }
    return true;
  }

  /** `call.args.NAME`: typed by the parameter schema of the tools the call can be. */
  private callArgument(
    name: string,
    written: string,
    origin: Origin,
    narrowed: readonly string[] | undefined,
  ): RewardExpr | undefined {
    const tools = this.scope.tools;
    if (!tools) return { op: "signal", namespace: "tool", name: `args.${name}`, type: "string", timing: "state" };
    const candidates = narrowed ? tools.filter((t) => narrowed.includes(t.name)) : tools;
    const which = narrowed ? `tool ${narrowed.map((n) => `'${n}'`).join(" or ")}` : "tool of the experiment";
    const having = candidates.filter((t) => Object.hasOwn(t.definition.parameters, name));
    if (having.length === 0) {
      const known = [...new Set(candidates.flatMap((t) => Object.keys(t.definition.parameters)))];
      this.error(
        origin,
        "unknown-argument",
        `'${written}': no ${which} takes an argument '${name}'`,
        didYouMean(name, known) ??
          (known.length
            ? `arguments: ${known.join(", ")}`
            : `${narrowed ? narrowed.map((n) => `'${n}'`).join(" and ") : "the experiment's tools"} take${narrowed?.length === 1 ? "s" : ""} no arguments`),
      );
      return undefined;
    }
    const parameterType = (t: ScopeTool) =>
      defined(t.definition.parameters[name], `parameter ${name} of tool ${t.name}`).type;
    const types = new Set(having.map(parameterType));
    const nested = [...types].find((t) => t === "array" || t === "object");
    if (nested) {
      this.error(
        origin,
        "type-mismatch",
        `'${written}' is ${nested === "array" ? "a list" : "an object"}; a condition tests string, number and boolean arguments`,
      );
      return undefined;
    }
    const exprTypes = new Set([...types].map((t) => (t === "boolean" ? "bool" : t === "string" ? "string" : "number")));
    if (exprTypes.size > 1) {
      const byTool = having.map((t) => `${t.name}: ${parameterType(t)}`).join(", ");
      this.error(
        origin,
        "type-mismatch",
        `'${written}' has a different type in different tools (${byTool})`,
        `name the tool first: call.tool == "${at(having, 0).name}" and ${written} ...`,
      );
      return undefined;
    }
    return { op: "signal", namespace: "tool", name: `args.${name}`, type: at([...exprTypes], 0), timing: "state" };
  }

  private error(origin: Origin, code: CompilerCode, message: string, hint?: string): void {
    expressionError(this.diagnostics, origin, code, message, hint);
  }
}

/** The tool names an `and`/`or` of `call.tool == "X"` tests restricts the call to, if it does. */
export function toolsAsserted(e: ast.Expression): string[] | undefined {
  if (e.kind !== "Binary") return undefined;
  if (e.operator === "==") {
    const named = (side: ast.Expression) => {
      const n = side.kind === "Member" ? dottedName(side) : undefined;
      return n === "call.tool" || n === "tool.name";
    };
    if (named(e.left) && e.right.kind === "String") return [e.right.value];
    if (named(e.right) && e.left.kind === "String") return [e.left.value];
    return undefined;
  }
  if (e.operator !== "and" && e.operator !== "or") return undefined;
  const left = toolsAsserted(e.left);
  const right = toolsAsserted(e.right);
  if (e.operator === "or") return left && right ? [...new Set([...left, ...right])] : undefined;
  return left && right ? left.filter((n) => right.includes(n)) : (left ?? right);
}
