// What an `arl` command is, and how one is declared: its flags are parsed here, once for every
// command, so a command's `run` starts from the parsed values. The dispatcher (main.ts) imports
// the commands; the commands import only this module, never the dispatcher.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError, type CliIO } from "./io.js";

export interface Command {
  readonly name: string;
  /** One line, for `arl --help`. */
  readonly summary: string;
  /** Printed for `arl NAME --help` and after a usage error. */
  readonly usage: string;
  run(args: readonly string[], io: CliIO): Promise<number>;
}

/** Flags every command has: anywhere among its arguments, they print its usage instead of running it. */
const HELP_FLAGS: readonly string[] = ["--help", "-h"];

export function asksForHelp(args: readonly string[]): boolean {
  return args.some((a) => HELP_FLAGS.includes(a));
}

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** The flag values node:util's parseArgs gives for `options`. */
export type FlagValues<O extends OptionsConfig> = ReturnType<typeof parseArgs<{ options: O; strict: true }>>["values"];

export interface ParsedArgs<O extends OptionsConfig> {
  readonly values: FlagValues<O>;
  readonly positionals: string[];
}

export interface CommandDefinition<O extends OptionsConfig> {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** The command's own flags (`--help` / `-h` are common to every command: see asksForHelp). */
  readonly options: O;
  /** Whether operands are accepted (default true); when not, one is a usage error. */
  readonly positionals?: boolean;
  run(args: ParsedArgs<O>, io: CliIO): Promise<number>;
}

/**
 * A command whose arguments are parsed strictly by `definition.options`: an unknown flag, a
 * flag without its value or an unexpected operand is a UsageError carrying parseArgs' own
 * message, which the dispatcher prints with the usage.
 */
export function defineCommand<const O extends OptionsConfig>(definition: CommandDefinition<O>): Command {
  const { name, summary, usage } = definition;
  return {
    name,
    summary,
    usage,
    async run(args, io) {
      let parsed;
      try {
        parsed = parseArgs({
          args: [...args],
          options: definition.options,
          allowPositionals: definition.positionals ?? true,
          strict: true,
        });
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      // parseArgs' result type cannot be resolved for a generic O here; at each definition it is FlagValues<O>.
      return await definition.run({ values: parsed.values, positionals: parsed.positionals }, io);
    },
  };
}
