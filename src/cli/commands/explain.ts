// `arl explain CODE` and `arl explain --list`: what a diagnostic code means. Lint rules carry
// their own explanation (the practice or paper behind them, the same text the editor shows on
// hover); the compiler's other codes are explained beside their definitions in src/diagnostics/codes/.
import { editDistance } from "../../contracts/suggest.js";
import { lintRule, lintRules } from "../../lint/index.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { compilerCodeExplanation, compilerCodes } from "../../diagnostics/codes/index.js";
import { at } from "../../contracts/checked.js";

const usage = `Usage: arl explain CODE
       arl explain --list

Prints what a diagnostic code means (the code in 'error[CODE]' or the JSON's "code"): for an RL
lint rule, the practice or paper behind it and how to silence it; for the compiler's other
codes, what triggers them and what to do. '--list' prints every code with a one-line summary.
Exit status: 0 explained, 2 unknown code or usage error.`;

interface Explanation {
  readonly code: string;
  readonly title: string;
  readonly text: string;
}

export function explain(code: string): Explanation | undefined {
  const rule = lintRule(code);
  if (rule) {
    return {
      code,
      title: rule.title,
      text: `${code} (lint rule, ${rule.severity}): ${rule.title}\n\n${rule.explanation}\n\nSilence it for one experiment with allow { ${code}: "why it does not apply" }.\n`,
    };
  }
  const known = compilerCodeExplanation(code);
  if (!known) return undefined;
  return {
    code,
    title: known.title,
    text: `${code} (${known.stage}, not a lint rule): ${known.title}\n\n${known.explanation}\n`,
  };
}

function allCodes(): string[] {
  return [...lintRules.map((r) => r.code), ...Object.keys(compilerCodes)];
}

const MAX_SUGGESTIONS = 3;

/** The codes closest to an unknown one: near in spelling, or containing it as whole words. */
function closestCodes(word: string): string[] {
  const lower = word.toLowerCase();
  const limit = Math.max(2, Math.floor(lower.length / 3));
  const scored = allCodes()
    .map((code) => {
      const partOf = lower.length >= 2 && `-${code}-`.includes(`-${lower}-`);
      return { code, distance: partOf ? 0 : editDistance(lower, code, limit) };
    })
    .filter((s) => s.distance <= limit)
    .sort((a, b) => a.distance - b.distance || (a.code < b.code ? -1 : 1));
  return scored.slice(0, MAX_SUGGESTIONS).map((s) => s.code);
}

function list(): string {
  const rules = lintRules.map((r) => ({ code: r.code, title: `${r.title} (${r.severity})` }));
  const compiler = Object.entries(compilerCodes).map(([code, c]) => ({ code, title: `${c.title} (${c.stage})` }));
  const width = Math.max(...[...rules, ...compiler].map((e) => e.code.length));
  const rows = (entries: { code: string; title: string }[]) =>
    entries.map((e) => `  ${e.code.padEnd(width)}  ${e.title}`).join("\n");
  return `RL lint rules (silence one with allow { CODE: "reason" }):\n${rows(rules)}\n\nCompiler diagnostics:\n${rows(compiler)}\n`;
}

export const explainCommand = defineCommand({
  name: "explain",
  summary: "explain a diagnostic code (a lint rule's practice or paper)",
  usage,
  options: { list: { type: "boolean", default: false } },
  async run(parsed, io) {
    if (parsed.values.list) {
      if (parsed.positionals.length > 0) throw new UsageError("give either a code or --list");
      io.stdout(list());
      return ExitCode.ok;
    }
    if (parsed.positionals.length !== 1)
      throw new UsageError("give one diagnostic code, e.g. 'arl explain group-size-one'");
    const code = at(parsed.positionals, 0);
    const found = explain(code) ?? explain(code.toLowerCase());
    if (found) {
      io.stdout(found.text);
      return ExitCode.ok;
    }
    const near = closestCodes(code);
    const suggestion =
      near.length > 0 ? `did you mean ${near.map((c) => `'${c}'`).join(", ")}?` : "it is not close to any code";
    io.stderr(`arl explain: unknown code '${code}'; ${suggestion}\nRun 'arl explain --list' for every code.\n`);
    return ExitCode.usage;
  },
});
