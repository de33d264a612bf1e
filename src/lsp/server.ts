// The ARL language server: wires the editor features to an LSP connection. Documents are
// synchronised incrementally; diagnostics are published after a quiet period (adaptive by
// default, from 25 ms for small files to 150 ms for large ones: `adaptiveDebounceMs`;
// `initializationOptions.debounceMs`, `arl lsp --debounce MS` or ARL_LSP_DEBOUNCE_MS fix it)
// for the documents an edit affects.
import {
  CodeActionKind,
  DidChangeWatchedFilesNotification,
  ErrorCodes,
  MessageType,
  ResponseError,
  ShowMessageNotification,
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type InitializeResult,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { codeActions } from "./code-actions.js";
import { completions } from "./completion.js";
import { uriToPath } from "./convert.js";
import { definition } from "./definition.js";
import { DiagnosticsManager } from "./diagnostics.js";
import { MESSAGE_TOO_LARGE, messageTooLargeText, type MessageTooLargeParams } from "./framing.js";
import { formatDocument } from "./formatting.js";
import { hover } from "./hover.js";
import { prepareRename, rename } from "./rename.js";
import { documentSymbols } from "./symbols.js";
import { Workspace } from "./workspace.js";
import { defined } from "../contracts/checked.js";

export interface ServerOptions {
  /** Quiet period after the last edit before diagnostics are computed; adaptive when absent. */
  readonly debounceMs?: number;
  readonly version?: string;
}

interface InitializationOptions {
  readonly debounceMs?: number;
}

export interface LanguageServer {
  readonly workspace: Workspace;
  readonly diagnostics: DiagnosticsManager;
}

export function startServer(connection: Connection, options: ServerOptions = {}): LanguageServer {
  const documents = new TextDocuments(TextDocument);
  const workspace = new Workspace();
  const diagnostics = new DiagnosticsManager(
    workspace,
    {
      publish: (uri, version, list) =>
        void connection.sendDiagnostics({ uri, ...(version !== undefined ? { version } : {}), diagnostics: list }),
    },
    options.debounceMs,
    (entry, error) =>
      connection.console.error(
        `arl: checking ${entry} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      ),
  );
  let watchFiles = false;

  connection.onInitialize((params): InitializeResult => {
    const init = (params.initializationOptions ?? {}) as InitializationOptions;
    if (typeof init.debounceMs === "number" && Number.isFinite(init.debounceMs) && init.debounceMs >= 0)
      diagnostics.debounceMs = init.debounceMs;
    const roots = (params.workspaceFolders ?? [])
      .map((f) => uriToPath(f.uri))
      .filter((p): p is string => p !== undefined);
    const root = params.rootUri ? uriToPath(params.rootUri) : (params.rootPath ?? undefined);
    if (roots.length === 0 && root) roots.push(root);
    workspace.roots = roots;
    watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        hoverProvider: true,
        completionProvider: { triggerCharacters: [".", ":", '"', "/"] },
        definitionProvider: true,
        documentSymbolProvider: true,
        documentFormattingProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        renameProvider: { prepareProvider: true },
      },
      serverInfo: { name: "arl", ...(options.version ? { version: options.version } : {}) },
    };
  });

  connection.onInitialized(() => {
    if (watchFiles)
      void connection.client.register(DidChangeWatchedFilesNotification.type, {
        watchers: [{ globPattern: "**/*.arl" }, { globPattern: "**/*.arl.lock" }],
      });
  });

  documents.onDidChangeContent((e) => {
    const file = workspace.changed(e.document);
    diagnostics.invalidate([file]);
  });
  documents.onDidClose((e) => {
    const file = workspace.closed(e.document.uri);
    diagnostics.closed(file);
  });
  connection.onDidChangeWatchedFiles((params) => {
    const files = params.changes
      .map((c) => uriToPath(c.uri))
      .filter((f): f is string => f !== undefined && !workspace.isOpen(f));
    if (files.length === 0) return;
    workspace.diskChanged();
    diagnostics.diskChanged(files);
  });

  /** Runs a request on an open document; internal failures are logged and answered with `fallback`. */
  const withDocument = <T>(uri: string, fallback: T, fn: (file: string, doc: TextDocument) => T): T => {
    const file = workspace.pathOf(uri);
    const doc = workspace.document(file);
    if (!doc) return fallback;
    try {
      return fn(file, doc);
    } catch (error) {
      if (error instanceof ResponseError) throw error;
      connection.console.error(
        `arl: request on ${uri} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      return fallback;
    }
  };

  connection.onHover((p) =>
    withDocument(p.textDocument.uri, null, (file, doc) =>
      hover(workspace.snapshot(file), doc.offsetAt(p.position), diagnostics.diagnosticsIn(file)),
    ),
  );
  connection.onCompletion((p) =>
    withDocument(p.textDocument.uri, [], (file, doc) => {
      const snapshot = workspace.snapshot(file);
      return completions(
        snapshot,
        doc.getText(),
        doc.offsetAt(p.position),
        defined(snapshot.entry, "the open document's module").parsed.lines,
      );
    }),
  );
  connection.onDefinition((p) =>
    withDocument(p.textDocument.uri, [], (file, doc) => definition(workspace.snapshot(file), doc.offsetAt(p.position))),
  );
  connection.onDocumentSymbol((p) =>
    withDocument(p.textDocument.uri, [], (file) =>
      documentSymbols(defined(workspace.snapshot(file).entry, "the open document's module").parsed.document),
    ),
  );
  connection.onDocumentFormatting((p) =>
    withDocument(p.textDocument.uri, [], (file, doc) => formatDocument(doc.getText(), file)),
  );
  connection.onCodeAction((p) =>
    withDocument(p.textDocument.uri, [], (file, doc) => {
      const entry = defined(workspace.snapshot(file).entry, "the open document's module");
      return codeActions({
        uri: doc.uri,
        text: doc.getText(),
        lines: entry.parsed.lines,
        document: entry.parsed.document,
        range: p.range,
        diagnostics: diagnostics.diagnosticsIn(file),
        uriOf: (f) => workspace.uriOf(f),
      });
    }),
  );
  connection.onPrepareRename((p) =>
    withDocument(p.textDocument.uri, null, (file, doc) =>
      prepareRename(workspace.snapshot(file), doc.offsetAt(p.position)),
    ),
  );
  connection.onRenameRequest((p) =>
    withDocument(p.textDocument.uri, null, (file, doc) =>
      rename(workspace.snapshot(file), doc.offsetAt(p.position), p.newName),
    ),
  );

  // What the framing guard passes on in place of a message over its limit (src/lsp/framing.ts):
  // a request is answered with the error, a notification (nobody waits for an answer) is shown.
  connection.onRequest(
    MESSAGE_TOO_LARGE,
    (p: MessageTooLargeParams) => new ResponseError(ErrorCodes.InvalidRequest, messageTooLargeText(p)),
  );
  connection.onNotification(
    MESSAGE_TOO_LARGE,
    (p: MessageTooLargeParams) =>
      void connection.sendNotification(ShowMessageNotification.type, {
        type: MessageType.Error,
        message: messageTooLargeText(p),
      }),
  );

  documents.listen(connection);
  connection.listen();
  return { workspace, diagnostics };
}
