// Hover: the schema's documentation of the field under the cursor (with what it accepts and its
// default), `///` docs, what a name in a value refers to (signal, tool, env, declaration), lint
// rule explanations on their diagnostics and `allow` keys, and, for blocks that inherit through
// `extends`, the effective values and where each comes from.
import { MarkupKind, type Hover } from "vscode-languageserver/node";
import type * as ast from "../language/ast.js";
import type { Module } from "../language/imports.js";
import { lintRule } from "../lint/index.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { toPlain } from "../semantics/plain.js";
import { getPath, type Origin, type RecordValue, type Value } from "../semantics/values.js";
import { kindDocs } from "./completion.js";
import { lspRangeOf, pathToUri } from "./convert.js";
import { contains, locate, type AstHit } from "./locate.js";
import { declarationPath } from "./paths.js";
import { callSignals } from "../semantics/expressions.js";
import { envsInScope, episodeSignals, leaves, resolveDeclaration, valueText } from "./resolve.js";
import { defaultText, describeField, docAt, valueCandidates } from "./schema.js";
import { displayFile, type Snapshot } from "./workspace.js";
import { at, defined, last } from "../contracts/checked.js";

export function hover(snapshot: Snapshot, offset: number, diagnostics: readonly Diagnostic[]): Hover | null {
  const module = snapshot.entry;
  if (!module) return null;
  const sections: string[] = [];
  let range: ast.Node["range"] | undefined;

  // Lint rules explain themselves on their findings.
  const seen = new Set<string>();
  for (const d of diagnostics) {
    if (!contains(d.range, offset) || seen.has(d.code)) continue;
    const rule = lintRule(d.code);
    if (!rule) continue;
    seen.add(d.code);
    sections.push(ruleText(rule.code, rule.title, rule.explanation));
    range ??= d.range;
  }

  const hit = locate(module.parsed.document, offset);
  if (hit) {
    const found = hitText(hit, snapshot, module);
    if (found) {
      sections.unshift(...found.sections.filter((s) => !sections.includes(s)));
      range = found.range;
    }
  }
  if (sections.length === 0) return null;
  return {
    contents: { kind: MarkupKind.Markdown, value: sections.join("\n\n---\n\n") },
    ...(range ? { range: lspRangeOf(module.parsed.lines, range.start.offset, range.end.offset) } : {}),
  };
}

function ruleText(code: string, title: string, explanation: string): string {
  return `**${code}** (lint rule): ${title}\n\n${explanation}`;
}

function code(text: string): string {
  return `\`${text.replace(/`/g, "'")}\``;
}

function link(origin: Origin, from: string): string {
  const line = origin.range.start.line;
  return `[${displayFile(origin.file, from)}:${line}](${pathToUri(origin.file)}#L${line})`;
}

/** Data of the declaration `top` as plain JSON placed at its path below the experiment root (narrows unions). */
function dataOf(snapshot: Snapshot, module: Module, top: ast.Block): { data: unknown; value: RecordValue | undefined } {
  const decl = snapshot.declarationOf(module, top);
  const value = decl ? snapshot.value(decl) : undefined;
  if (!value) return { data: undefined, value: undefined };
  let data = toPlain(value);
  const base = declarationPath(top.type.name, top.name?.name) ?? [];
  for (const key of [...base].reverse()) data = { [key]: data };
  return { data, value };
}

function fieldSection(path: readonly string[], data: unknown, ownDoc: string | undefined): string {
  const lines = [`${code(path.join("."))}${describeField(path, data) ? `: ${describeField(path, data)}` : ""}`];
  const doc = docAt(path, data);
  if (doc) lines.push(doc);
  if (ownDoc) lines.push(ownDoc);
  const def = defaultText(path, data);
  if (def !== undefined) lines.push(`Default: ${code(def)}`);
  return lines.join("\n\n");
}

/** The effective value at `path` (the declaration's value with `extends` applied), listing what is inherited. */
function effectiveSection(
  value: RecordValue | undefined,
  top: ast.Block,
  path: readonly string[] | undefined,
  here: ast.Node["range"],
  snapshot: Snapshot,
  from: string,
): string | undefined {
  if (!value || !path) return undefined;
  const base = declarationPath(top.type.name, top.name?.name);
  if (!base || path.length < base.length || base.some((b, i) => path[i] !== b)) return undefined;
  const v: Value | undefined = path.length === base.length ? value : getPath(value, path.slice(base.length));
  if (!v) return undefined;
  const outside = (o: Origin) =>
    o.file !== from || o.range.start.offset < here.start.offset || o.range.end.offset > here.end.offset;
  if (v.kind !== "record") {
    if (!outside(v.origin)) return undefined;
    return `Effective value: ${code(valueText(v, snapshot))} from ${link(v.origin, from)}`;
  }
  const all = leaves(v);
  if (!all.some((l) => outside(l.value.origin))) return undefined;
  const shown = all.slice(0, 40).map((l) => {
    const inherited = outside(l.value.origin);
    return `- ${code(`${l.key}: ${valueText(l.value, snapshot)}`)}${inherited ? ` from ${link(l.value.origin, from)}` : " (here)"}`;
  });
  if (all.length > 40) shown.push(`- … and ${all.length - 40} more`);
  return `Effective values${v.kind === "record" && v.extendsFrom ? ` (extends ${code(v.extendsFrom)})` : ""}:\n\n${shown.join("\n")}`;
}

function hitText(
  hit: AstHit,
  snapshot: Snapshot,
  module: Module,
): { sections: string[]; range: ast.Node["range"] } | undefined {
  const from = module.path;
  switch (hit.kind) {
    case "importPath":
    case "importAlias": {
      const imp = module.imports.find((i) => i.decl === hit.decl);
      const where = imp?.target ? `${code(displayFile(imp.target, from))}` : "(not found)";
      return {
        sections: [`import ${code(hit.decl.path.value)} as ${code(imp?.name ?? "?")}: ${where}`],
        range: hit.kind === "importPath" ? hit.decl.path.range : defined(hit.decl.alias, "the import alias").range,
      };
    }
    case "blockType":
    case "blockName": {
      const { block, top } = hit;
      const range = hit.kind === "blockType" ? block.type.range : defined(block.name, "the block name").range;
      const sections: string[] = [];
      const isTop = block === top;
      const { data, value } = dataOf(snapshot, module, top);
      if (isTop) {
        sections.push(
          `${code(`${block.type.name}${block.name ? ` ${block.name.name}` : ""}`)}${kindDocs[block.type.name] ? `: ${kindDocs[block.type.name]}` : ""}`,
        );
        if (block.doc) sections.push(block.doc);
      } else if (hit.place.mode === "ablation") {
        sections.push(
          `ablation arm ${code(block.type.name)}: a variant of the experiment with these overrides, named \`${block.type.name}\`.`,
        );
      } else if (hit.inner.mode === "sweep" && hit.inner.path?.length === 0) {
        sections.push(
          "`sweep`: variants over the cartesian product of the listed values; each variant is named after its values (`max_turns=8`).",
        );
      } else if (hit.inner.mode === "ablation") {
        sections.push("`ablation`: named variants, each a set of overrides of the experiment.");
      } else if (hit.inner.mode === "allow") {
        sections.push(
          '`allow`: lint rules silenced for this experiment, each with its reason: `allow { rule-code: "why it does not apply" }`.',
        );
      } else if (hit.inner.path && hit.inner.path.length > 0) {
        sections.push(fieldSection(hit.inner.path, data, block.doc));
      }
      const eff =
        hit.place.mode === "normal" && hit.inner.mode === "normal"
          ? effectiveSection(value, top, hit.inner.path, block.range, snapshot, from)
          : undefined;
      if (eff) sections.push(eff);
      return sections.length > 0 ? { sections, range } : undefined;
    }
    case "extends": {
      const parts = hit.ref.parts.map((p) => p.name);
      const decl = resolveDeclaration(snapshot, module, parts);
      const range = hit.ref.range;
      if (!decl) return { sections: [`${code(parts.join("."))}: not found`], range };
      const origin = { file: decl.module.path, range: defined(decl.block.name, "the declaration's name").range };
      const sections = [`${code(`${decl.type} ${decl.name}`)} in ${link(origin, from)}`];
      if (decl.block.doc) sections.push(decl.block.doc);
      return { sections, range };
    }
    case "key": {
      const { range, name: key } = at(hit.field.path, hit.index);
      if (hit.place.mode === "allow") {
        const rule = lintRule(key);
        return {
          sections: [rule ? ruleText(rule.code, rule.title, rule.explanation) : `${code(key)} is not a lint rule`],
          range,
        };
      }
      if (!hit.path) return undefined;
      const { data, value } = dataOf(snapshot, module, hit.top);
      const sections = [
        fieldSection(hit.path, data, hit.index === hit.field.path.length - 1 ? hit.field.doc : undefined),
      ];
      // In a sweep or an ablation arm the entry is an override, not the experiment's own value.
      const eff =
        hit.place.mode === "normal"
          ? effectiveSection(value, hit.top, hit.path, hit.field.range, snapshot, from)
          : undefined;
      if (eff) sections.push(eff);
      return { sections, range };
    }
    case "name":
      return nameText(hit, snapshot, module);
  }
}

function nameText(
  hit: Extract<AstHit, { kind: "name" }>,
  snapshot: Snapshot,
  module: Module,
): { sections: string[]; range: ast.Node["range"] } | undefined {
  const from = module.path;
  const range = at(hit.ranges, hit.index);
  const whole = { start: at(hit.ranges, 0).start, end: last(hit.ranges).end };
  const written = hit.parts.join(".");
  const scope = { topType: hit.top.type.name, topName: hit.top.name?.name };
  const [head, second] = hit.parts;
  // An enum value: the field's documentation.
  if (hit.field && hit.parts.length === 1 && head !== undefined) {
    const { data } = dataOf(snapshot, module, hit.top);
    const candidates = valueCandidates(hit.field, data, { element: true });
    if (candidates.includes(head) || valueCandidates(hit.field, data).includes(head)) {
      return { sections: [`${code(head)}: a value of ${fieldSection(hit.field, data, undefined)}`], range };
    }
  }
  const envs = envsInScope(snapshot, scope);
  if (hit.parts.length === 2 && head === "episode" && second !== undefined) {
    const s = episodeSignals[second];
    if (s)
      return {
        sections: [`${code(written)}: ${s.type} (${s.timing}) signal of every episode\n\n${s.doc}`],
        range: whole,
      };
  }
  if (head === "call" && second !== undefined && callSignals[second]) {
    const [, , arg] = hit.parts;
    if (second === "args" && arg !== undefined) {
      const takers = envs.flatMap((e) =>
        e.tools.flatMap((t) =>
          t.parameters.filter((p) => p.name === arg).map((p) => `${code(t.name)} (${p.type ?? "?"})`),
        ),
      );
      return {
        sections: [
          `${code(written)}: the argument ${code(arg)} of the call being judged, before it runs${takers.length ? `; taken by ${takers.join(", ")}` : ""}`,
        ],
        range: whole,
      };
    }
    return {
      sections: [`${code(written)}: ${callSignals[second].doc} Judged before the call runs (constraints only).`],
      range: whole,
    };
  }
  if (hit.parts.length === 2 && (head === "outcome" || head === "state" || head === "env")) {
    const found = envs.flatMap((e) =>
      e.signals.filter((s) => s.name === second && (head === "env" || s.scope === head)),
    );
    const [s] = found;
    if (s) {
      const lines = [
        `${code(written)}: ${s.type ?? "?"} ${s.scope ?? ""} signal, declared by env ${found.map((f) => code(f.env)).join(", ")}`,
      ];
      if (s.doc) lines.push(s.doc);
      if (s.origin) lines.push(`Declared in ${link(s.origin, from)}`);
      return { sections: [lines.join("\n\n")], range: whole };
    }
  }
  const env = envs.find((e) => e.name === head);
  if (env) {
    if (hit.parts.length === 1 || hit.index === 0) {
      const lines = [`${code(`env ${env.name}`)}${env.kind ? ` (kind ${code(env.kind)})` : ""}`];
      if (env.doc) lines.push(env.doc);
      if (env.origin) lines.push(`Declared in ${link(env.origin, from)}`);
      return { sections: [lines.join("\n\n")], range: at(hit.ranges, 0) };
    }
    const tool = env.tools.find((t) => t.name === second);
    if (tool) {
      const lines = [`${code(`tool ${tool.name}`)} of env ${code(env.name)}`];
      if (tool.description) lines.push(tool.description);
      if (tool.origin) lines.push(`Declared in ${link(tool.origin, from)}`);
      return { sections: [lines.join("\n\n")], range: whole };
    }
    const signal = env.signals.find((s) => s.name === second);
    if (signal) {
      const lines = [`${code(written)}: ${signal.type ?? "?"} ${signal.scope ?? ""} signal of env ${code(env.name)}`];
      if (signal.doc) lines.push(signal.doc);
      if (signal.origin) lines.push(`Declared in ${link(signal.origin, from)}`);
      return { sections: [lines.join("\n\n")], range: whole };
    }
    if (second === "tools")
      return {
        sections: [
          `${code(written)}: every tool of env ${code(env.name)}: ${env.tools.map((t) => code(t.name)).join(", ")}`,
        ],
        range: whole,
      };
  }
  const decl = resolveDeclaration(snapshot, module, hit.parts);
  if (decl) {
    const origin = { file: decl.module.path, range: defined(decl.block.name, "the declaration's name").range };
    const lines = [`${code(`${decl.type} ${decl.name}`)} in ${link(origin, from)}`];
    if (decl.block.doc) lines.push(decl.block.doc);
    return { sections: [lines.join("\n\n")], range: whole };
  }
  return undefined;
}
