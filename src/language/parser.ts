// The concrete-syntax parser: one reused Chevrotain CstParser with error recovery, so that one
// run reports every independent syntax error and still yields a tree for the editor.
import { CstParser, type CstNode, type IToken, type IParserErrorMessageProvider, type TokenType } from "chevrotain";
import * as t from "./tokens.js";
import { at } from "../contracts/checked.js";

/** A token as messages quote it: 'image' (long ones cut), or "the end of the file". */
export function describeToken(token: IToken): string {
  if (token.tokenType.name === "EOF") return "the end of the file";
  const image = token.image.length > 24 ? `${token.image.slice(0, 24)}…` : token.image;
  return `'${image}'`;
}

function label(type: TokenType): string {
  return type.LABEL ?? type.name;
}

/** Messages in the form `expected X, found Y`, using the tokens' readable labels. */
const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, actual }) {
    return `expected ${label(expected)}, found ${describeToken(actual)}`;
  },
  buildNotAllInputParsedMessage({ firstRedundant }) {
    return `expected a block such as 'experiment NAME { ... }', found ${describeToken(firstRedundant)}`;
  },
  buildNoViableAltMessage({ expectedPathsPerAlt, actual, ruleName }) {
    // `name 1`: the name is fine, what follows it is not.
    if (ruleName === "entry" && actual[0]?.tokenType === t.Identifier && actual[1]) {
      return `expected ':' or '{' after '${actual[0].image}', found ${describeToken(actual[1])}`;
    }
    const starts = new Set<string>();
    for (const alt of expectedPathsPerAlt) for (const path of alt) if (path[0]) starts.add(label(path[0]));
    const what = ruleDescriptions[ruleName] ?? `one of ${[...starts].join(", ")}`;
    return `expected ${what}, found ${describeToken(at(actual, 0))}`;
  },
  buildEarlyExitMessage({ expectedIterationPaths, actual, ruleName }) {
    const starts = new Set<string>();
    for (const path of expectedIterationPaths) if (path[0]) starts.add(label(path[0]));
    const what = ruleDescriptions[ruleName] ?? `one of ${[...starts].join(", ")}`;
    return `expected ${what}, found ${describeToken(at(actual, 0))}`;
  },
};

const ruleDescriptions: Record<string, string> = {
  entry: "a field ('name: value') or a block ('name { ... }')",
  key: "a field name",
  primary: "a value (number, string, true, false, none, a name, a list, a record or '(')",
  block: "a block such as 'experiment NAME { ... }'",
};

export class ArlCstParser extends CstParser {
  constructor() {
    super(t.allTokens as TokenType[], {
      recoveryEnabled: true,
      nodeLocationTracking: "full",
      maxLookahead: 3,
      errorMessageProvider: messages,
    });
    this.performSelfAnalysis();
  }

  /**
   * Called with each top-level block's node as soon as it is parsed (never while the grammar is
   * recorded): parse.ts turns it into AST there and then, so that the block's CST dies young
   * instead of the whole file's CST staying alive until the end (garbage collection was a third
   * of a large file's load).
   */
  public onBlock: ((block: CstNode) => void) | undefined;

  /** file = { import } { block }   (stray tokens between blocks are consumed and reported) */
  public document = this.RULE("document", () => {
    this.MANY(() => this.SUBRULE(this.importDecl));
    this.MANY2(() => {
      this.OR([
        {
          ALT: () => {
            const block = this.SUBRULE(this.block);
            this.ACTION(() => this.onBlock?.(block));
          },
        },
        // Misplaced imports and fields are parsed so that they can be reported precisely.
        { ALT: () => this.SUBRULE2(this.importDecl, { LABEL: "lateImport" }) },
        { ALT: () => this.SUBRULE(this.field, { LABEL: "topLevelField" }) },
        { ALT: () => this.SUBRULE(this.stray) },
        { ALT: () => this.CONSUME(t.RBrace, { LABEL: "strayBrace" }) },
      ]);
    });
  });

  /** A run of tokens that cannot start an entry: one syntax error for the whole run. */
  public stray = this.RULE("stray", () => {
    this.AT_LEAST_ONE(() => this.CONSUME(t.Stray));
  });

  /** import = "import" STRING [ "as" IDENT ] */
  public importDecl = this.RULE("importDecl", () => {
    this.CONSUME(t.Import);
    this.CONSUME(t.StringToken);
    this.OPTION(() => {
      this.CONSUME(t.As);
      this.CONSUME(t.Identifier, { LABEL: "alias" });
    });
  });

  /** block = IDENT [ IDENT ] [ "extends" reference ] "{" body "}" */
  public block = this.RULE("block", () => {
    this.CONSUME(t.Identifier, { LABEL: "type" });
    this.OPTION(() => this.CONSUME2(t.Identifier, { LABEL: "name" }));
    this.OPTION2(() => {
      this.CONSUME(t.Extends);
      this.SUBRULE(this.reference);
    });
    this.CONSUME(t.LBrace);
    this.SUBRULE(this.body);
    this.CONSUME(t.RBrace);
  });

  /** body = { entry [ "," ] } */
  public body = this.RULE("body", () => {
    this.MANY(() => {
      // One token decides (the gate does the rest): with more, a field whose value is broken
      // (`x: )`) would match no alternative here, instead of failing inside its value.
      this.OR({
        MAX_LOOKAHEAD: 1,
        DEF: [
          // First, and only where `entry` cannot match: see `malformedEntry`.
          {
            GATE: () => this.entryCannotStart(),
            ALT: () => this.SUBRULE(this.malformedEntry),
            IGNORE_AMBIGUITIES: true,
          },
          {
            ALT: () => {
              this.SUBRULE(this.entry);
              this.OPTION(() => this.CONSUME(t.Comma));
            },
          },
          { ALT: () => this.SUBRULE(this.stray) },
        ],
      });
    });
  });

  /**
   * A name that starts neither a field nor a block (`description "text"`, `x 1`): the name and
   * the rest of its line, up to a brace. Consuming it here keeps the block's later entries, and
   * their errors, in the tree; without it, recovery skipped to the end of the file.
   */
  public malformedEntry = this.RULE("malformedEntry", () => {
    const name = this.CONSUME(t.Identifier);
    this.MANY({
      GATE: () =>
        this.LA(1).startLine === name.startLine &&
        this.LA(1).tokenType !== t.LBrace &&
        this.LA(1).tokenType !== t.RBrace,
      DEF: () => {
        this.OR([
          { ALT: () => this.CONSUME(t.Stray, { LABEL: "rest" }) },
          { ALT: () => this.CONSUME(t.StringToken, { LABEL: "rest" }) },
          { ALT: () => this.CONSUME2(t.Identifier, { LABEL: "rest" }) },
          { ALT: () => this.CONSUME(t.Import, { LABEL: "rest" }) },
        ]);
      },
    });
  });

  /** Whether the tokens ahead are a name that neither `field` nor `block` can continue. */
  private entryCannotStart(): boolean {
    if (this.LA(1).tokenType !== t.Identifier) return false;
    const second = this.LA(2).tokenType;
    if (second === t.Colon || second === t.Dot || second === t.Minus || second === t.LBrace || second === t.Extends)
      return false;
    if (second !== t.Identifier) return true;
    const third = this.LA(3).tokenType;
    return third !== t.LBrace && third !== t.Extends;
  }

  /** entry = path ":" expr | block */
  public entry = this.RULE("entry", () => {
    this.OR([{ ALT: () => this.SUBRULE(this.field) }, { ALT: () => this.SUBRULE(this.block) }]);
  });

  /** field = key { "." key } ":" expr */
  public field = this.RULE("field", () => {
    this.SUBRULE(this.key);
    this.MANY(() => {
      this.CONSUME(t.Dot);
      this.SUBRULE2(this.key);
    });
    this.CONSUME(t.Colon);
    this.SUBRULE(this.expression);
  });

  /** key = IDENT { "-" ( IDENT | NUMBER ) } | STRING   (kebab-case keys such as lint codes in `allow`) */
  public key = this.RULE("key", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(t.Identifier);
          this.MANY(() => {
            this.CONSUME(t.Minus);
            // A later segment may start with a digit: `turn-budget-below-2x-optimal`.
            this.OR2([
              { ALT: () => this.CONSUME2(t.Identifier) },
              { ALT: () => this.CONSUME(t.NumberToken, { LABEL: "segment" }) },
            ]);
          });
        },
      },
      { ALT: () => this.CONSUME(t.StringToken) },
    ]);
  });

  /** reference = IDENT { "." IDENT } */
  public reference = this.RULE("reference", () => {
    this.CONSUME(t.Identifier);
    this.MANY(() => {
      this.CONSUME(t.Dot);
      this.CONSUME2(t.Identifier);
    });
  });

  /**
   * expr = operand { binary-operator operand }. Precedence and grouping are applied when the
   * AST is built (cst-to-ast.ts, precedence climbing): one flat rule keeps the tree small and
   * the parser fast; ten nested precedence rules made a CST node per level for every value.
   */
  public expression = this.RULE("expression", () => {
    this.SUBRULE(this.operand);
    this.MANY(() => {
      this.OR([
        { ALT: () => this.CONSUME(t.When) },
        { ALT: () => this.CONSUME(t.Or) },
        { ALT: () => this.CONSUME(t.And) },
        { ALT: () => this.CONSUME(t.ComparisonOp) },
        { ALT: () => this.CONSUME(t.AdditiveOp) },
        { ALT: () => this.CONSUME(t.MultiplicativeOp) },
      ]);
      this.SUBRULE2(this.operand);
    });
  });

  /** operand = { "not" } { "-" | "+" } postfix   (loops, not recursion: long prefix chains stay stack-safe) */
  public operand = this.RULE("operand", () => {
    this.MANY(() => this.CONSUME(t.Not));
    this.MANY2(() => this.CONSUME(t.AdditiveOp));
    this.SUBRULE(this.postfix);
  });

  /** postfix = primary { "." IDENT | "(" [ args ] ")" } */
  public postfix = this.RULE("postfix", () => {
    this.SUBRULE(this.primary);
    this.MANY(() => {
      this.OR([
        {
          ALT: () => {
            this.CONSUME(t.Dot);
            this.CONSUME(t.Identifier);
          },
        },
        { ALT: () => this.SUBRULE(this.callArguments) },
      ]);
    });
  });

  /** args = "(" [ arg { "," arg } [ "," ] ] ")" ;  arg = [ IDENT ":" ] expr */
  public callArguments = this.RULE("callArguments", () => {
    this.CONSUME(t.LParen);
    this.MANY(() => {
      this.SUBRULE(this.argument);
      this.OPTION(() => this.CONSUME(t.Comma));
    });
    this.CONSUME(t.RParen);
  });

  public argument = this.RULE("argument", () => {
    this.OPTION({
      GATE: () => this.LA(2).tokenType === t.Colon,
      DEF: () => {
        this.CONSUME(t.Identifier, { LABEL: "name" });
        this.CONSUME(t.Colon);
      },
    });
    this.SUBRULE(this.expression);
  });

  public primary = this.RULE("primary", () => {
    this.OR([
      { ALT: () => this.CONSUME(t.NumberToken) },
      { ALT: () => this.CONSUME(t.StringToken) },
      { ALT: () => this.CONSUME(t.True) },
      { ALT: () => this.CONSUME(t.False) },
      { ALT: () => this.CONSUME(t.None) },
      { ALT: () => this.CONSUME(t.Identifier) },
      { ALT: () => this.SUBRULE(this.list) },
      { ALT: () => this.SUBRULE(this.record) },
      { ALT: () => this.SUBRULE(this.parenthesized) },
    ]);
  });

  /** list = "[" [ expr { "," expr } [ "," ] ] "]" */
  public list = this.RULE("list", () => {
    this.CONSUME(t.LBracket);
    this.MANY(() => {
      this.SUBRULE(this.expression);
      this.OPTION(() => this.CONSUME(t.Comma));
    });
    this.CONSUME(t.RBracket);
  });

  /** record = "{" body "}" */
  public record = this.RULE("record", () => {
    this.CONSUME(t.LBrace);
    this.SUBRULE(this.body);
    this.CONSUME(t.RBrace);
  });

  public parenthesized = this.RULE("parenthesized", () => {
    this.CONSUME(t.LParen);
    this.SUBRULE(this.expression);
    this.CONSUME(t.RParen);
  });
}

/** The one parser instance (Chevrotain parsers are built once and reset per input). */
export const parser: ArlCstParser = new ArlCstParser();
