// The VS Code client of the ARL language server: starts `arl lsp --stdio` (see server-path.ts
// for which `arl`) and hands it the .arl documents.
import * as vscode from "vscode";
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { resolveServer } from "./server-path";

let client: LanguageClient | undefined;

function serverOptions(context: vscode.ExtensionContext): ServerOptions {
  const config = vscode.workspace.getConfiguration("arl");
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
  const launch = resolveServer(config.get<string>("server.path"), folders, context.asAbsolutePath("server/dist/cli/arl.mjs"));
  if (launch.kind === "module") {
    // The client appends --stdio for TransportKind.stdio.
    return { module: launch.module, args: ["lsp"], transport: TransportKind.stdio };
  }
  // The client appends --stdio for TransportKind.stdio.
  return { command: launch.command, args: ["lsp"], transport: TransportKind.stdio, options: { shell: process.platform === "win32" } };
}

function createClient(context: vscode.ExtensionContext): LanguageClient {
  const config = vscode.workspace.getConfiguration("arl");
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "arl" },
      { scheme: "untitled", language: "arl" },
    ],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.{arl,arl.lock}") },
    // Unset: the server adapts the quiet period to the file's size.
    initializationOptions: debounceOption(config.get<number | null>("server.debounceMs", null)),
  };
  return new LanguageClient("arl", "ARL language server", serverOptions(context), clientOptions);
}

function debounceOption(ms: number | null): { debounceMs?: number } {
  return typeof ms === "number" ? { debounceMs: ms } : {};
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  client = createClient(context);
  await client.start();
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration("arl.server")) return;
      await client?.stop();
      client = createClient(context);
      await client.start();
    }),
    vscode.commands.registerCommand("arl.restartServer", async () => {
      await client?.restart();
    }),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
