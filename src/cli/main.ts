// `arl` command-line entry: dispatches to one module per command. Never lets an exception
// escape as a stack trace: internal failures are reported as such, with how to report them.
import { arlVersion } from "../plan/version.js";
import { asksForHelp, type Command } from "./command.js";
import { cancelCommand } from "./commands/cancel.js";
import { checkCommand } from "./commands/check.js";
import { conformanceCommand } from "./commands/conformance.js";
import { diffCommand } from "./commands/diff.js";
import { explainCommand } from "./commands/explain.js";
import { exportCommand } from "./commands/export.js";
import { fmtCommand } from "./commands/fmt.js";
import { lspCommand } from "./commands/lsp.js";
import { lockCommand } from "./commands/lock.js";
import { planCommand } from "./commands/plan.js";
import { reportCommand } from "./commands/report.js";
import { runCommand } from "./commands/run.js";
import { serveCommand } from "./commands/serve.js";
import { showCommand } from "./commands/show.js";
import { statusCommand } from "./commands/status.js";
import { submitCommand } from "./commands/submit.js";
import { ExitCode, processIO, UsageError, type CliIO } from "./io.js";

const commands: readonly Command[] = [
  checkCommand,
  explainCommand,
  fmtCommand,
  planCommand,
  lockCommand,
  diffCommand,
  runCommand,
  submitCommand,
  statusCommand,
  cancelCommand,
  serveCommand,
  exportCommand,
  showCommand,
  reportCommand,
  conformanceCommand,
  lspCommand,
];

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `arl ${arlVersion()}: compile and run agentic-RL experiments declared in .arl files

Usage: arl <command> [options]

Commands:
${lines.join("\n")}

Run 'arl <command> --help' for a command's options.
`;
}

export async function runCli(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    io.stdout(help());
    return first === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (first === "--version" || first === "-V") {
    io.stdout(`${arlVersion()}\n`);
    return ExitCode.ok;
  }
  const command = commands.find((c) => c.name === first);
  if (!command) {
    io.stderr(`arl: unknown command '${first}'\n\n${help()}`);
    return ExitCode.usage;
  }
  if (asksForHelp(rest)) {
    io.stdout(`${command.usage}\n`);
    return ExitCode.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`arl ${command.name}: ${error.message}\n\n${command.usage}\n`);
      return ExitCode.usage;
    }
    const detail = error instanceof Error ? error.message : String(error);
    io.stderr(
      `arl ${command.name}: internal error: ${detail}\nThis is a bug in arl, not in your spec; please report it with the input that caused it.\n`,
    );
    if (io.env.ARL_DEBUG && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return ExitCode.usage;
  }
}
