// Names as the editor resolves them: the envs an experiment declares (with their signals and
// tools, inherited through `extends` included), declarations by `name` or `alias.name`, and
// the value text and origin shown in hovers.
import type { Module } from "../language/imports.js";
import { declarationNameRange, type Declaration } from "../semantics/declarations.js";
import { episodeSignals } from "../semantics/expressions.js";
import type { Origin, RecordValue, Value } from "../semantics/values.js";
import type { Scope } from "./context.js";
import type { Snapshot } from "./workspace.js";
import { at } from "../contracts/checked.js";

export interface SignalInfo {
  readonly name: string;
  readonly env: string;
  readonly scope?: string;
  readonly type?: string;
  readonly doc?: string;
  readonly origin?: Origin;
}

export interface ToolInfo {
  readonly name: string;
  readonly env: string;
  readonly description?: string;
  /** Argument names and their JSON types (for `call.args.NAME`). */
  readonly parameters: readonly { readonly name: string; readonly type?: string }[];
  readonly doc?: string;
  readonly origin?: Origin;
}

export interface EnvInfo {
  readonly name: string;
  readonly origin?: Origin;
  readonly doc?: string;
  readonly kind?: string;
  readonly signals: readonly SignalInfo[];
  readonly tools: readonly ToolInfo[];
}

/** The namespaces of reward and constraint expressions (besides env names). */
export const signalNamespaces = ["outcome", "state", "episode", "env"] as const;

export { episodeSignals };

function nameOf(v: Value | undefined): string | undefined {
  if (v?.kind === "name") return v.path.join(".");
  if (v?.kind === "scalar" && typeof v.value === "string") return v.value;
  return undefined;
}

function withType(v: Value): { type?: string } {
  const type = v.kind === "record" ? nameOf(v.fields.get("type")) : undefined;
  return type ? { type } : {};
}

function envInfo(name: string, value: Value, origin?: Origin, doc?: string): EnvInfo {
  const signals: SignalInfo[] = [];
  const tools: ToolInfo[] = [];
  let kind: string | undefined;
  if (value.kind === "record") {
    kind = nameOf(value.fields.get("kind"));
    const s = value.fields.get("signals");
    if (s?.kind === "record") {
      for (const [sname, sv] of s.fields) {
        const fields = sv.kind === "record" ? sv.fields : undefined;
        const scope = nameOf(fields?.get("scope"));
        const type = nameOf(fields?.get("type"));
        const sdoc = s.docs.get(sname);
        const sorigin = s.keyOrigins.get(sname);
        signals.push({
          name: sname,
          env: name,
          ...(scope ? { scope } : {}),
          ...(type ? { type } : {}),
          ...(sdoc ? { doc: sdoc } : {}),
          ...(sorigin ? { origin: sorigin } : {}),
        });
      }
    }
    const t = value.fields.get("tool");
    if (t?.kind === "record") {
      for (const [tname, tv] of t.fields) {
        const d = tv.kind === "record" ? tv.fields.get("description") : undefined;
        const description = d?.kind === "scalar" && typeof d.value === "string" ? d.value : undefined;
        const tdoc = t.docs.get(tname);
        const torigin = t.keyOrigins.get(tname);
        const p = tv.kind === "record" ? tv.fields.get("parameters") : undefined;
        const parameters =
          p?.kind === "record" ? [...p.fields].map(([pname, pv]) => ({ name: pname, ...withType(pv) })) : [];
        tools.push({
          name: tname,
          env: name,
          ...(description ? { description } : {}),
          parameters,
          ...(tdoc ? { doc: tdoc } : {}),
          ...(torigin ? { origin: torigin } : {}),
        });
      }
    }
  }
  return { name, ...(origin ? { origin } : {}), ...(doc ? { doc } : {}), ...(kind ? { kind } : {}), signals, tools };
}

/** The envs whose signals and tools the cursor's declaration can name. */
export function envsInScope(snapshot: Snapshot, scope: Scope): EnvInfo[] {
  const entry = snapshot.entry;
  if (!entry) return [];
  if (scope.topType === "experiment") {
    const found = snapshot.entryDeclarationValue(scope.topName);
    const envs = found?.value.fields.get("env");
    if (envs?.kind !== "record") return [];
    return [...envs.fields].map(([name, v]) => envInfo(name, v, envs.keyOrigins.get(name), envs.docs.get(name)));
  }
  if (scope.topType === "env") {
    const found = snapshot.entryDeclarationValue(scope.topName);
    return found
      ? [
          envInfo(
            found.decl.name,
            found.value,
            { file: entry.path, range: declarationNameRange(found.decl) },
            found.decl.block.doc,
          ),
        ]
      : [];
  }
  // A reward or harness declared on its own: any env the program declares.
  const out: EnvInfo[] = [];
  for (const module of snapshot.program.modules.values()) {
    for (const decl of snapshot.index.declarationsOf(module).values()) {
      if (decl.type !== "env") continue;
      const value = snapshot.value(decl);
      if (value)
        out.push(envInfo(decl.name, value, { file: module.path, range: declarationNameRange(decl) }, decl.block.doc));
    }
  }
  return out;
}

/** The declaration `name` (in `module`) or `alias.name` (through an import of `module`). */
export function resolveDeclaration(
  snapshot: Snapshot,
  module: Module,
  parts: readonly string[],
): Declaration | undefined {
  if (parts.length === 1) return snapshot.index.declarationsOf(module).get(at(parts, 0));
  if (parts.length === 2) {
    const target = snapshot.index.importedModule(module, at(parts, 0));
    return target ? snapshot.index.declarationsOf(target).get(at(parts, 1)) : undefined;
  }
  return undefined;
}

/** Short source-like text of a value, for hovers. */
export function valueText(v: Value, snapshot: Snapshot, depth = 0): string {
  switch (v.kind) {
    case "scalar":
      if (v.value === null) return "none";
      if (typeof v.value === "string") {
        const s = v.value.length > 40 ? `${v.value.slice(0, 40)}…` : v.value;
        return JSON.stringify(s);
      }
      return String(v.value);
    case "name":
      return v.path.join(".");
    case "list": {
      const items = v.items.slice(0, 6).map((i) => valueText(i, snapshot, depth + 1));
      return `[${items.join(", ")}${v.items.length > 6 ? ", …" : ""}]`;
    }
    case "call": {
      const args = [
        ...v.args.map((a) => valueText(a, snapshot, depth + 1)),
        ...[...v.named].map(([k, a]) => `${k}: ${valueText(a, snapshot, depth + 1)}`),
      ];
      return `${v.callee}(${args.join(", ")})`;
    }
    case "record":
      if (depth > 0) return v.fields.size === 0 ? "{}" : "{ … }";
      return `{ ${[...v.fields]
        .slice(0, 4)
        .map(([k, f]) => `${k}: ${valueText(f, snapshot, depth + 1)}`)
        .join(", ")}${v.fields.size > 4 ? ", …" : ""} }`;
    case "expression": {
      const text = snapshot.module(v.origin.file)?.parsed.text ?? snapshot.workspace.host.readFile(v.origin.file);
      const src = text?.slice(v.origin.range.start.offset, v.origin.range.end.offset).replace(/\s+/g, " ");
      return src ? (src.length > 60 ? `${src.slice(0, 60)}…` : src) : "(expression)";
    }
  }
}

/** The leaves of a record value (nested records flattened to dotted keys), with their origins. */
export function leaves(
  v: RecordValue,
  prefix = "",
  depth = 0,
  out: { key: string; value: Value }[] = [],
): { key: string; value: Value }[] {
  for (const [k, f] of v.fields) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (f.kind === "record" && f.fields.size > 0 && depth < 3) leaves(f, key, depth + 1, out);
    else out.push({ key, value: f });
  }
  return out;
}
