// The grammar artifacts under grammar/ must match the parser: generated files byte for byte,
// the hand-written EBNF rule by rule.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { Lexer } from "chevrotain";
import { describe, expect, it } from "vitest";
import { parser } from "../../src/language/parser.js";
import { allTokens, reservedWords } from "../../src/language/tokens.js";
import {
  diagramsHtml,
  GRAMMAR_DIR,
  grammarArtifacts,
  keywords,
  parserRuleNames,
  tmLanguageJson,
} from "../../src/grammar/generate.js";

const STALE = "is out of date: run `npm run grammar`";

function read(file: string): string | undefined {
  const target = path.join(GRAMMAR_DIR, file);
  return existsSync(target) ? readFileSync(target, "utf8") : undefined;
}

/**
 * W3C EBNF: each defined symbol with the symbols its right-hand side names (comments, strings
 * and [classes] skipped), in file order.
 */
function ebnfRules(text: string): Map<string, string[]> {
  const words: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new Error("unterminated comment in arl.ebnf");
      i = end + 2;
    } else if (c === '"' || c === "'" || c === "[") {
      const end = text.indexOf(c === "[" ? "]" : c, i + 1);
      if (end < 0) throw new Error(`unterminated ${c} in arl.ebnf`);
      i = end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      words.push(m);
      i += m.length;
    } else if (text.startsWith("::=", i)) {
      words.push("::=");
      i += 3;
    } else i++;
  }
  const rules = new Map<string, string[]>();
  let body: string[] | undefined;
  words.forEach((w, k) => {
    if (w === "::=") return;
    if (words[k + 1] === "::=") {
      if (rules.has(w)) throw new Error(`${w} is defined twice in arl.ebnf`);
      rules.set(w, (body = []));
    } else body?.push(w);
  });
  return rules;
}

/** Token categories (Chevrotain's `Lexer.NA` tokens) and the concrete tokens in each. */
function tokenCategories(): Map<string, string[]> {
  const concrete = allTokens.filter((tok) => tok.PATTERN !== Lexer.NA);
  const out = new Map<string, string[]>();
  for (const category of allTokens.filter((tok) => tok.PATTERN === Lexer.NA)) {
    out.set(
      category.name,
      concrete.filter((tok) => (tok.CATEGORIES ?? []).includes(category)).map((tok) => tok.name),
    );
  }
  return out;
}

describe("generated grammar artifacts", () => {
  for (const [file, expected] of grammarArtifacts()) {
    it(`grammar/${file} is up to date`, () => {
      const actual = read(file);
      expect(actual !== undefined, `grammar/${file} is missing: run \`npm run grammar\``).toBe(true);
      // Compare without printing the whole file on failure.
      expect(actual === expected, `grammar/${file} ${STALE}`).toBe(true);
    });
  }

  it("is deterministic", () => {
    expect(diagramsHtml()).toBe(diagramsHtml());
    expect(tmLanguageJson()).toBe(tmLanguageJson());
  });
});

describe("grammar/arl.ebnf", () => {
  const ebnf = read("arl.ebnf") ?? "";
  const rules = ebnfRules(ebnf);
  const defined = [...rules.keys()];
  const used = new Set([...rules.values()].flat());

  it("states its notation", () => {
    expect(ebnf).toMatch(/Notation: W3C EBNF/);
  });

  it("defines every parser rule", () => {
    const missing = parserRuleNames().filter((rule) => !defined.includes(rule));
    expect(missing, "parser rules without a production in grammar/arl.ebnf").toEqual([]);
  });

  it("defines every token", () => {
    const missing = allTokens.map((tok) => tok.name).filter((name) => !defined.includes(name));
    expect(missing, "tokens without a production in grammar/arl.ebnf").toEqual([]);
  });

  it("defines every symbol it uses", () => {
    const undefinedSymbols = [...used].filter((u) => u !== "Char" && !defined.includes(u));
    expect(undefinedSymbols).toEqual([]);
  });

  it("names the same tokens and rules in each production as the parser", () => {
    // A coarse structural check: the symbols each parser rule refers to, whatever the shape.
    const symbols = (node: unknown, out: Set<string>): Set<string> => {
      const n = node as { type?: string; name?: string; definition?: unknown[] };
      if ((n.type === "Terminal" || n.type === "NonTerminal") && n.name) out.add(n.name);
      for (const child of n.definition ?? []) symbols(child, out);
      return out;
    };
    const productions = parser.getSerializedGastProductions() as unknown as { name: string; definition: unknown[] }[];
    for (const { name, definition } of productions) {
      const fromParser = [...symbols({ definition }, new Set())].sort();
      const fromEbnf = [...new Set(rules.get(name) ?? [])].sort();
      expect(fromEbnf, `symbols of ${name} in grammar/arl.ebnf`).toEqual(fromParser);
    }
  });

  it("defines no rule the parser lacks (lower-case names are parser rules)", () => {
    const rules = new Set(parserRuleNames());
    expect(defined.filter((d) => /^[a-z]/.test(d) && !rules.has(d))).toEqual([]);
  });

  it("lists exactly the tokens of each token category", () => {
    const concrete = new Set(allTokens.filter((tok) => tok.PATTERN !== Lexer.NA).map((tok) => tok.name));
    // A symbol's concrete tokens: itself if it is one, else those of the symbols it names.
    const expand = (symbol: string, seen: Set<string> = new Set()): string[] => {
      if (concrete.has(symbol)) return [symbol];
      if (seen.has(symbol)) return [];
      seen.add(symbol);
      return (rules.get(symbol) ?? []).flatMap((s) => expand(s, seen));
    };
    for (const [category, members] of tokenCategories()) {
      expect([...new Set(expand(category))].sort(), `${category} in grammar/arl.ebnf`).toEqual([...members].sort());
    }
  });

  it("spells every reserved word", () => {
    for (const word of reservedWords) expect(ebnf, word).toContain(`"${word}"`);
  });
});

describe("grammar/arl.tmLanguage.json", () => {
  const text = read("arl.tmLanguage.json") ?? "{}";

  it("is a TextMate grammar for source.arl", () => {
    const grammar = JSON.parse(text) as { scopeName?: string; patterns?: unknown[]; repository?: object };
    expect(grammar.scopeName).toBe("source.arl");
    expect(grammar.patterns?.length).toBeGreaterThan(0);
    expect(grammar.repository).toBeTypeOf("object");
  });

  it("has regexes that compile in JavaScript and includes that resolve", () => {
    const grammar = JSON.parse(text) as { repository: Record<string, unknown> };
    const bad: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) node.forEach((n, k) => walk(n, `${where}[${k}]`));
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (["match", "begin", "end", "while"].includes(key) && typeof value === "string") {
            try {
              new RegExp(value);
            } catch (error) {
              bad.push(`${where}.${key}: ${(error as Error).message}`);
            }
          } else if (key === "include" && typeof value === "string" && value.startsWith("#")) {
            if (!(value.slice(1) in grammar.repository)) bad.push(`${where}: unknown include ${value}`);
          } else walk(value, `${where}.${key}`);
        }
      }
    };
    walk(grammar, "grammar");
    expect(bad).toEqual([]);
  });

  it("highlights every reserved word", () => {
    expect(keywords().sort()).toEqual([...reservedWords].sort());
    for (const word of reservedWords) expect(text, word).toMatch(new RegExp(`[(|:]${word}[|)]`));
  });
});

describe("grammar/diagrams.html", () => {
  const html = read("diagrams.html") ?? "";

  it("loads only local resources, and they exist", () => {
    expect(html).not.toMatch(/https?:\/\//i);
    const refs = [...html.matchAll(/(?:src|href)\s*=\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(5);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^\.\//);
      expect(existsSync(path.join(GRAMMAR_DIR, ref)), `${ref} is missing: run \`npm run grammar\``).toBe(true);
    }
  });

  it("draws one diagram per parser rule", () => {
    // Run the page's scripts without a browser: the builder only produces SVG text.
    const context: Record<string, unknown> = {};
    context.window = context;
    vm.createContext(context);
    for (const m of html.matchAll(/<script src='([^']+)'><\/script>/g)) {
      vm.runInContext(readFileSync(path.join(GRAMMAR_DIR, m[1]!), "utf8"), context, { filename: m[1]! });
    }
    const inline = /<script>\s*(window\.serializedGrammar[\s\S]*?)<\/script>/.exec(html)?.[1];
    expect(inline).toBeDefined();
    vm.runInContext(inline!, context);
    const builder = context.diagrams_builder as { buildSyntaxDiagramsText(grammar: unknown): string };
    const svg = builder.buildSyntaxDiagramsText(context.serializedGrammar);
    expect(svg.match(/<svg/g)?.length).toBe(parserRuleNames().length);
  });
});
