// A real LSP client for the tests: starts `node bin/arl.js lsp --stdio` and talks JSON-RPC to
// it over the child's stdin/stdout, the way an editor does.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  CodeActionRequest,
  CompletionRequest,
  createProtocolConnection,
  DefinitionRequest,
  DidChangeTextDocumentNotification,
  DidChangeWatchedFilesNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentFormattingRequest,
  DocumentSymbolRequest,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  PrepareRenameRequest,
  PublishDiagnosticsNotification,
  RenameRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type CodeAction,
  type Command,
  type CompletionItem,
  type CompletionList,
  type Diagnostic,
  type DocumentSymbol,
  type FileEvent,
  type Hover,
  type Location,
  type LocationLink,
  type Position,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  type Range,
  type SymbolInformation,
  type TextDocumentContentChangeEvent,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver-protocol/node";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(REPO, "bin", "arl.js");

export interface StartOptions {
  /** The server's command line; default `node bin/arl.js lsp --stdio`. */
  readonly command?: readonly string[];
  readonly debounceMs?: number;
  readonly rootPath?: string;
  readonly env?: Record<string, string>;
}

export class LspClient {
  readonly published: PublishDiagnosticsParams[] = [];
  private waiters: {
    test: (p: PublishDiagnosticsParams) => boolean;
    resolve: (p: PublishDiagnosticsParams) => void;
  }[] = [];
  readonly stderr: string[] = [];
  private readonly versions = new Map<string, number>();

  private constructor(
    readonly child: ChildProcess,
    readonly connection: ProtocolConnection,
  ) {}

  static async start(options: StartOptions = {}): Promise<LspClient> {
    const [exe, ...argv] = options.command ?? [process.execPath, BIN, "lsp", "--stdio"];
    const child = spawn(exe!, argv, {
      cwd: REPO,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const connection = createProtocolConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    const client = new LspClient(child, connection);
    child.stderr.on("data", (chunk: Buffer) => client.stderr.push(chunk.toString()));
    connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      client.published.push(p);
      const ready = client.waiters.filter((w) => w.test(p));
      client.waiters = client.waiters.filter((w) => !ready.includes(w));
      for (const w of ready) w.resolve(p);
    });
    connection.listen();
    const root = options.rootPath;
    await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: root ? pathToFileURL(root).href : null,
      workspaceFolders: root ? [{ uri: pathToFileURL(root).href, name: path.basename(root) }] : null,
      capabilities: {
        textDocument: {
          publishDiagnostics: { relatedInformation: true, versionSupport: true },
          completion: { completionItem: { snippetSupport: false } },
          hover: { contentFormat: ["markdown", "plaintext"] },
          documentSymbol: { hierarchicalDocumentSymbolSupport: true },
          rename: { prepareSupport: true },
        },
        workspace: { workspaceFolders: true },
      },
      initializationOptions: options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs },
    });
    await connection.sendNotification(InitializedNotification.type, {});
    return client;
  }

  /** Resolves with the next publish (from now on) for `uri` that satisfies `test`. */
  nextDiagnostics(
    uri: string,
    test: (p: PublishDiagnosticsParams) => boolean = () => true,
    timeoutMs = 20_000,
  ): Promise<PublishDiagnosticsParams> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no diagnostics for ${uri} within ${timeoutMs} ms; stderr: ${this.stderr.join("")}`)),
        timeoutMs,
      );
      this.waiters.push({
        test: (p) => p.uri === uri && test(p),
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
      });
    });
  }

  publishedFor(uri: string): PublishDiagnosticsParams[] {
    return this.published.filter((p) => p.uri === uri);
  }

  async open(uri: string, text: string, version = 1): Promise<PublishDiagnosticsParams> {
    const next = this.nextDiagnostics(uri, (p) => p.version === version);
    this.versions.set(uri, version);
    await this.connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "arl", version, text },
    });
    return next;
  }

  /** Sends a change (whole text, or incremental edits) and returns the new version. */
  async change(uri: string, changes: string | TextDocumentContentChangeEvent[]): Promise<number> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const contentChanges = typeof changes === "string" ? [{ text: changes }] : changes;
    await this.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges,
    });
    return version;
  }

  async close(uri: string): Promise<void> {
    await this.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  }

  async filesChanged(changes: FileEvent[]): Promise<void> {
    await this.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes });
  }

  hover(uri: string, position: Position): Promise<Hover | null> {
    return this.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position });
  }

  async completion(uri: string, position: Position): Promise<CompletionItem[]> {
    const r: CompletionItem[] | CompletionList | null = await this.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position,
    });
    return r === null ? [] : Array.isArray(r) ? r : r.items;
  }

  async definition(uri: string, position: Position): Promise<Location[]> {
    const r: Location | Location[] | LocationLink[] | null = await this.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri },
      position,
    });
    if (r === null) return [];
    const list = Array.isArray(r) ? r : [r];
    return list.map((l) => ("targetUri" in l ? { uri: l.targetUri, range: l.targetSelectionRange } : l));
  }

  async symbols(uri: string): Promise<DocumentSymbol[]> {
    const r: DocumentSymbol[] | SymbolInformation[] | null = await this.connection.sendRequest(
      DocumentSymbolRequest.type,
      { textDocument: { uri } },
    );
    return (r ?? []) as DocumentSymbol[];
  }

  async formatting(uri: string): Promise<TextEdit[]> {
    return (
      (await this.connection.sendRequest(DocumentFormattingRequest.type, {
        textDocument: { uri },
        options: { tabSize: 2, insertSpaces: true },
      })) ?? []
    );
  }

  async codeActions(uri: string, range: Range, diagnostics: Diagnostic[] = []): Promise<CodeAction[]> {
    const r: (Command | CodeAction)[] | null = await this.connection.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range,
      context: { diagnostics },
    });
    return (r ?? []).filter((a): a is CodeAction => "title" in a && !("command" in a && typeof a.command === "string"));
  }

  prepareRename(uri: string, position: Position) {
    return this.connection.sendRequest(PrepareRenameRequest.type, { textDocument: { uri }, position });
  }

  async rename(uri: string, position: Position, newName: string): Promise<WorkspaceEdit | null> {
    return this.connection.sendRequest(RenameRequest.type, { textDocument: { uri }, position, newName });
  }

  async stop(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => {
      if (this.child.exitCode !== null) resolve(this.child.exitCode);
      else this.child.once("exit", (code) => resolve(code));
    });
    try {
      await Promise.race([this.connection.sendRequest(ShutdownRequest.type), new Promise((r) => setTimeout(r, 5000))]);
      await this.connection.sendNotification(ExitNotification.type);
    } catch {
      // already gone
    }
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    const code = await exited;
    clearTimeout(timer);
    this.connection.dispose();
    return code;
  }
}

/** A temporary folder of .arl files, removed by `dispose`. */
export function tempSpecs(files: Record<string, string>): {
  dir: string;
  path: (name: string) => string;
  uri: (name: string) => string;
  write: (name: string, text: string) => void;
  dispose: () => void;
} {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-lsp-"));
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  for (const [name, text] of Object.entries(files)) write(name, text);
  return {
    dir,
    path: (name) => path.join(dir, name),
    uri: (name) => pathToFileURL(path.join(dir, name)).href,
    write,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

interface JsonDiagnostic {
  file: string;
  code: string;
  severity: string;
  message: string;
  range: { start: { line: number; column: number }; end: { line: number; column: number } };
  hint?: string;
  related?: { file: string; message: string; range: JsonDiagnostic["range"] }[];
}

/** `arl check --format json FILE`, converted to what the server must publish for FILE. */
export function checkAsLsp(file: string): Diagnostic[] {
  return checkAllAsLsp([file]).get(file) ?? [];
}

/**
 * `arl check --format json FILES...` in one run, converted per file. Equal to checking each on its
 * own as long as no file of the set imports another.
 */
export function checkAllAsLsp(files: readonly string[]): Map<string, Diagnostic[]> {
  const r = spawnSync(process.execPath, [BIN, "check", "--format", "json", ...files], { cwd: REPO, encoding: "utf8" });
  const report = JSON.parse(r.stdout) as { diagnostics: JsonDiagnostic[] };
  const abs = (f: string) => path.resolve(REPO, f);
  const range = (x: JsonDiagnostic["range"]): Range => ({
    start: { line: x.start.line - 1, character: x.start.column - 1 },
    end: { line: x.end.line - 1, character: x.end.column - 1 },
  });
  const severity = { error: 1, warning: 2, info: 3 } as Record<string, 1 | 2 | 3>;
  const out = new Map<string, Diagnostic[]>(files.map((f) => [f, []]));
  for (const d of report.diagnostics) {
    out.get(abs(d.file))?.push({
      range: range(d.range),
      severity: severity[d.severity]!,
      code: d.code,
      source: "arl",
      message: d.message,
    });
  }
  return out;
}

/** A diagnostic's message as text (LSP 3.18 allows markup; the server sends strings). */
export function messageOf(d: Diagnostic): string {
  return typeof d.message === "string" ? d.message : d.message.value;
}

/** A published diagnostic without the server's private `data`. */
/**
 * A published diagnostic as `arl check --format json` describes it: without the server's
 * private `data` and the related information (notes and hints) the JSON shape leaves out.
 */
export function comparable(d: Diagnostic): Diagnostic {
  const { data: _data, relatedInformation: _related, ...rest } = d;
  return rest;
}

/** The LSP position of the first occurrence of `needle` in `text` (plus `delta` characters). */
export function positionOf(text: string, needle: string, delta = 0, occurrence = 0): Position {
  let at = -1;
  for (let i = 0; i <= occurrence; i++) {
    at = text.indexOf(needle, at + 1);
    if (at < 0) throw new Error(`'${needle}' not found`);
  }
  const offset = at + delta;
  const before = text.slice(0, offset);
  const line = before.split("\n").length - 1;
  return { line, character: offset - (before.lastIndexOf("\n") + 1) };
}

/** Applies LSP text edits to a text. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  const offset = (p: Position) => Math.min(text.length, (lineStarts[p.line] ?? text.length) + p.character);
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
  return out;
}
