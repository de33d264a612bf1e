// Completion: field names and block kinds from the schema, values of enums, signals after
// `outcome.` and friends, tools after `<env>.`, declarations after `alias.` and `extends`, and
// stdlib paths in imports. The context comes from the tokens before the cursor, so it works
// in unfinished text.
import path from "node:path";
import { arlFilesBelow, importPathBelow } from "../language/arl-files.js";
import { CompletionItemKind, InsertTextFormat, MarkupKind, type CompletionItem } from "vscode-languageserver/node";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { LineIndex } from "../contracts/source-range.js";
import { lintRules } from "../lint/index.js";
import { toPlain } from "../semantics/plain.js";
import { declarationKinds } from "../semantics/schema/experiment.js";
import { cursorContext, type CursorContext, type Prefix, type Scope } from "./context.js";
import { lspRangeOf } from "./convert.js";
import { declarationPath } from "./paths.js";
import { callSignals, expressionFunctions } from "../semantics/expressions.js";
import { envsInScope, episodeSignals, signalNamespaces, type EnvInfo } from "./resolve.js";
import { describeField, docAt, fieldShape, fieldsAt, valueCandidates } from "./schema.js";
import type { Snapshot } from "./workspace.js";
import { at } from "../contracts/checked.js";

/** What each top-level block kind is, for completion and hover. */
export const kindDocs: Record<string, string> = {
  experiment:
    "An experiment: a policy trained on envs with a reward, an algorithm and a rollout plan. Sweeps and ablations make variants of it.",
  env: "An environment: tasks, splits, the typed signals it exposes to rewards, and the tools it provides.",
  tool: "A tool the model can call: description and parameters (lowered to JSON Schema).",
  policy: "The model being trained and how it samples.",
  harness: "The agent loop: tools, call format, budgets.",
  reward: "Named reward terms over typed signals.",
  algorithm: "Advantages, loss and optimisation (presets in std/algorithms).",
  mask: "Which tokens the loss trains on.",
  rollout: "How experience is collected.",
  eval: "Periodic evaluation on a held-out split.",
  resources: "Where the trainer runs.",
  tracking: "Trackers the run's metrics are copied to: TensorBoard, W&B, MLflow.",
};

/** Functions of reward terms and conditions, with what they do. */
const expressionFunctionItems = Object.entries(expressionFunctions).map(([f, fn]) => ({
  label: f,
  kind: CompletionItemKind.Function,
  detail: `${f}(...)`,
  documentation: fn.doc,
}));

export function completions(snapshot: Snapshot, text: string, offset: number, lines: LineIndex): CompletionItem[] {
  const ctx = cursorContext(text, offset);
  const afterColon = /:$/.test(text.slice(0, offset).replace(/[A-Za-z_][A-Za-z0-9_]*$/, ""));
  const items = itemsFor(ctx, snapshot);
  // Right after `name:` with no space, insert one before the value.
  if (afterColon && (ctx.kind === "value" || ctx.kind === "member")) {
    for (const item of items) if (!item.textEdit && !item.insertText) item.insertText = ` ${item.label}`;
  }
  // Words with characters outside identifiers (`self-inclusive-baseline`, `std/envs/sql`) replace the whole prefix.
  if (ctx.kind === "import" || (ctx.kind === "key" && ctx.place.mode === "allow")) {
    const prefix: Prefix = ctx.prefix;
    const range = lspRangeOf(lines, prefix.start, offset);
    for (const item of items) item.textEdit = { range, newText: item.insertText ?? item.label };
  }
  return items;
}

function itemsFor(ctx: CursorContext, snapshot: Snapshot): CompletionItem[] {
  switch (ctx.kind) {
    case "top":
      return [
        ...declarationKinds.map((k) => ({
          label: k,
          kind: CompletionItemKind.Class,
          detail: "declaration",
          documentation: kindDocs[k] ?? "",
        })),
        { label: "import", kind: CompletionItemKind.Keyword, detail: 'import "std/..." as name' },
      ];
    case "key":
      return [...keyItems(ctx, snapshot), ...(ctx.operators ? operatorItems() : [])];
    case "value":
      return valueItems(ctx, snapshot);
    case "member":
      return memberItems(ctx, snapshot);
    case "operator":
      return operatorItems();
    case "header":
      return [
        { label: "extends", kind: CompletionItemKind.Keyword, detail: "derive this block from another declaration" },
      ];
    case "extends":
      return extendsItems(ctx, snapshot);
    case "import":
      return importItems(snapshot);
    case "none":
      return [];
  }
}

function operatorItems(): CompletionItem[] {
  return ["when", "and", "or", "not"].map((k) => ({ label: k, kind: CompletionItemKind.Keyword }));
}

/** The plain data of the declaration the cursor is in, placed at its path below the experiment root. */
function scopeData(snapshot: Snapshot, scope: Scope): unknown {
  if (!scope.topType) return undefined;
  const found = snapshot.entryDeclarationValue(scope.topName);
  if (!found) return undefined;
  let data = toPlain(found.value);
  const base = declarationPath(scope.topType, scope.topName) ?? [];
  for (const key of [...base].reverse()) data = { [key]: data };
  return data;
}

function docMarkup(doc: string | undefined, extra?: string): CompletionItem["documentation"] {
  const value = [doc, extra].filter(Boolean).join("\n\n");
  return value ? { kind: MarkupKind.Markdown, value } : undefined;
}

function keyItems(ctx: Extract<CursorContext, { kind: "key" }>, snapshot: Snapshot): CompletionItem[] {
  const { place } = ctx;
  if (place.mode === "allow") {
    return lintRules.map((r) => ({
      label: r.code,
      kind: CompletionItemKind.EnumMember,
      detail: r.title,
      documentation: { kind: MarkupKind.Markdown, value: r.explanation },
      insertText: `${r.code}: "`,
    }));
  }
  if (place.mode === "ablation" || place.path === undefined) return [];
  const base = [...place.path, ...ctx.keyPrefix];
  const data = scopeData(snapshot, ctx.scope);
  const names = fieldsAt(base, data);
  const out: CompletionItem[] = names.map((name) => {
    const p = [...base, name];
    const shape = fieldShape(p, data);
    const described = describeField(p, data);
    const item: CompletionItem = {
      label: name,
      kind: shape === "block" || shape === "map" ? CompletionItemKind.Struct : CompletionItemKind.Field,
      detail: described ? `${p.join(".")}: ${described}` : p.join("."),
    };
    const documentation = docMarkup(docAt(p, data));
    if (documentation) item.documentation = documentation;
    return item;
  });
  if (
    base.length === 0 &&
    ctx.keyPrefix.length === 0 &&
    place.mode === "normal" &&
    ctx.scope.topType === "experiment"
  ) {
    out.push(
      {
        label: "sweep",
        kind: CompletionItemKind.Struct,
        detail: "variants: the cartesian product of lists of values",
        documentation: "`sweep { harness.max_turns: [6, 8, 12] }`",
      },
      {
        label: "ablation",
        kind: CompletionItemKind.Struct,
        detail: "variants: named sets of overrides",
        documentation: "`ablation { full {} no_kl { algorithm.kl.coef: 0 } }`",
      },
    );
  }
  return out;
}

function isExpressionField(field: readonly string[]): "reward" | "constraint" | undefined {
  if (field[0] === "reward" && field.length >= 2 && field[1] !== "on_env_error") return "reward";
  if (field[0] === "constraints" && field.length >= 2) return "constraint";
  return undefined;
}

function isToolsField(field: readonly string[] | undefined): boolean {
  return field !== undefined && field.length === 2 && field[0] === "harness" && field[1] === "tools";
}

function valueItems(ctx: Extract<CursorContext, { kind: "value" }>, snapshot: Snapshot): CompletionItem[] {
  const field = ctx.field;
  if (!field) return [];
  const expression = isExpressionField(field);
  if (expression) {
    const envs = envsInScope(snapshot, ctx.scope);
    const out: CompletionItem[] = [
      ...signalNamespaces.map((ns) => ({ label: ns, kind: CompletionItemKind.Module, detail: `${ns}.* signals` })),
      ...envs.map((e) => ({ label: e.name, kind: CompletionItemKind.Module, detail: `signals of env '${e.name}'` })),
      ...expressionFunctionItems,
      { label: "true", kind: CompletionItemKind.Keyword },
      { label: "false", kind: CompletionItemKind.Keyword },
    ];
    if (expression === "reward")
      out.push({
        label: "potential",
        kind: CompletionItemKind.Function,
        detail: "potential(Phi): potential-based shaping",
      });
    else
      out.push(
        {
          label: "call",
          kind: CompletionItemKind.Module,
          detail: "call.tool, call.env, call.args.NAME: the call being judged, before it runs",
        },
        { label: "block", kind: CompletionItemKind.Function, detail: "block(condition)" },
      );
    return out;
  }
  if (isToolsField(field)) {
    const out: CompletionItem[] = [];
    for (const env of envsInScope(snapshot, ctx.scope)) {
      out.push({
        label: `${env.name}.tools`,
        kind: CompletionItemKind.Module,
        detail: `every tool of env '${env.name}'`,
      });
      for (const t of env.tools)
        out.push({
          label: `${env.name}.${t.name}`,
          kind: CompletionItemKind.Function,
          ...(t.description ? { detail: t.description } : {}),
        });
    }
    const entry = snapshot.entry;
    if (entry) {
      for (const d of snapshot.index.declarationsOf(entry).values())
        if (d.type === "tool") out.push({ label: d.name, kind: CompletionItemKind.Function, detail: "tool" });
      for (const imp of entry.imports)
        out.push({ label: imp.name, kind: CompletionItemKind.Module, detail: `import "${imp.decl.path.value}"` });
    }
    return out;
  }
  if (ctx.inCall) return [];
  const data = scopeData(snapshot, ctx.scope);
  const element = ctx.inList && ctx.place.mode !== "sweep";
  const doc = docAt(field, data);
  return valueCandidates(field, data, { element }).map((v) => {
    const item: CompletionItem = {
      label: v,
      kind: v === "true" || v === "false" || v === "none" ? CompletionItemKind.Keyword : CompletionItemKind.EnumMember,
      detail: field.join("."),
    };
    const documentation = docMarkup(doc);
    if (documentation) item.documentation = documentation;
    return item;
  });
}

function signalItems(envs: readonly EnvInfo[], scope: string | undefined): CompletionItem[] {
  const byName = new Map<string, { envs: string[]; type?: string; scope?: string; doc?: string }>();
  for (const env of envs) {
    for (const s of env.signals) {
      if (scope && s.scope !== scope) continue;
      const seen = byName.get(s.name);
      if (seen) seen.envs.push(env.name);
      else
        byName.set(s.name, {
          envs: [env.name],
          ...(s.type ? { type: s.type } : {}),
          ...(s.scope ? { scope: s.scope } : {}),
          ...(s.doc ? { doc: s.doc } : {}),
        });
    }
  }
  return [...byName].map(([name, s]) => {
    const item: CompletionItem = {
      label: name,
      kind: CompletionItemKind.Variable,
      detail: `${s.type ?? "?"} ${s.scope ?? ""} signal of env ${s.envs.join(", ")}`.replace(/\s+/g, " "),
    };
    if (s.doc) item.documentation = { kind: MarkupKind.Markdown, value: s.doc };
    return item;
  });
}

function memberItems(ctx: Extract<CursorContext, { kind: "member" }>, snapshot: Snapshot): CompletionItem[] {
  const [head, ...rest] = ctx.chain;
  if (head === undefined) return [];
  const envs = envsInScope(snapshot, ctx.scope);
  if (rest.length === 0) {
    if (head === "outcome" || head === "state") return signalItems(envs, head);
    if (head === "env") return signalItems(envs, undefined);
    if (head === "episode") {
      return Object.entries(episodeSignals).map(([name, s]) => ({
        label: name,
        kind: CompletionItemKind.Variable,
        detail: `${s.type} ${s.timing} signal of every episode`,
        documentation: s.doc,
      }));
    }
    if (head === "call") {
      return Object.entries(callSignals).map(([name, c]) => ({
        label: name,
        kind: name === "args" ? CompletionItemKind.Module : CompletionItemKind.Variable,
        detail: name === "args" ? "call.args.NAME" : `string: ${c.doc}`,
        documentation: c.doc,
      }));
    }
    if (head === "tool") {
      return [
        { label: "name", kind: CompletionItemKind.Variable, detail: "string: the called tool's name" },
        { label: "env", kind: CompletionItemKind.Variable, detail: "string: the env providing the tool" },
        { label: "args", kind: CompletionItemKind.Module, detail: "tool.args.NAME: an argument of the call" },
      ];
    }
    const env = envs.find((e) => e.name === head);
    if (env) {
      if (isToolsField(ctx.field)) {
        return [
          { label: "tools", kind: CompletionItemKind.Module, detail: `every tool of env '${env.name}'` },
          ...env.tools.map((t) => ({
            label: t.name,
            kind: CompletionItemKind.Function,
            ...(t.description ? { detail: t.description } : {}),
          })),
        ];
      }
      return signalItems([env], undefined);
    }
  }
  if ((head === "call" || head === "tool") && rest.length === 1 && rest[0] === "args") {
    // Every argument of the tools the envs offer, with the tools that take it.
    const byName = new Map<string, { tools: string[]; type?: string }>();
    for (const t of envs.flatMap((e) => e.tools)) {
      for (const p of t.parameters) {
        const seen = byName.get(p.name);
        if (seen) seen.tools.push(t.name);
        else byName.set(p.name, { tools: [t.name], ...(p.type ? { type: p.type } : {}) });
      }
    }
    return [...byName].map(([name, a]) => ({
      label: name,
      kind: CompletionItemKind.Variable,
      detail: `${a.type ?? "?"} argument of ${a.tools.join(", ")}`,
    }));
  }
  const entry = snapshot.entry;
  if (entry && rest.length === 0) {
    const target = snapshot.index.importedModule(entry, head);
    if (target) {
      const onlyTools = isToolsField(ctx.field);
      return [...snapshot.index.declarationsOf(target).values()]
        .filter((d) => !onlyTools || d.type === "tool")
        .map((d) => declarationItem(d.name, d.type, d.block.doc));
    }
  }
  return [];
}

function declarationItem(name: string, type: string, doc: string | undefined): CompletionItem {
  const item: CompletionItem = {
    label: name,
    kind: type === "tool" ? CompletionItemKind.Function : CompletionItemKind.Class,
    detail: `${type} ${name}`,
  };
  if (doc) item.documentation = { kind: MarkupKind.Markdown, value: doc };
  return item;
}

function extendsItems(ctx: Extract<CursorContext, { kind: "extends" }>, snapshot: Snapshot): CompletionItem[] {
  const entry = snapshot.entry;
  if (!entry) return [];
  const matches = (type: string) => ctx.blockType === "" || type === ctx.blockType;
  if (ctx.chain.length === 0) {
    const out: CompletionItem[] = entry.imports.map((imp) => ({
      label: imp.name,
      kind: CompletionItemKind.Module,
      detail: `import "${imp.decl.path.value}"`,
    }));
    for (const d of snapshot.index.declarationsOf(entry).values()) {
      if (matches(d.type) && d.name !== ctx.scope.topName) out.push(declarationItem(d.name, d.type, d.block.doc));
    }
    return out;
  }
  if (ctx.chain.length === 1) {
    const target = snapshot.index.importedModule(entry, at(ctx.chain, 0));
    if (!target) return [];
    return [...snapshot.index.declarationsOf(target).values()]
      .filter((d) => matches(d.type))
      .map((d) => declarationItem(d.name, d.type, d.block.doc));
  }
  return [];
}

function importItems(snapshot: Snapshot): CompletionItem[] {
  const entry = snapshot.program.entry;
  const skipDirs = new Set(["node_modules"]);
  const labels = [
    ...arlFilesBelow(STDLIB_ROOT, { skipDirs, maxDepth: 4 }).map((f) => importPathBelow(STDLIB_ROOT, f)),
    ...arlFilesBelow(path.dirname(entry), { skipDirs, maxDepth: 2 })
      .filter((f) => f !== entry)
      .map((f) => `./${importPathBelow(path.dirname(entry), f)}`),
  ];
  const out: CompletionItem[] = labels.map((label) => ({ label, kind: CompletionItemKind.File }));
  return out.map((i) => ({ ...i, insertText: i.label, insertTextFormat: InsertTextFormat.PlainText }));
}
