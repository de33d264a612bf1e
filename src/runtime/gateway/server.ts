// The HTTP half of the agent gateway (docs/gateway.md): one node:http server per run on
// 127.0.0.1, a session per episode under `/s/<id>`, a per-session key, bounded bodies, OpenAI
// error objects for every refusal and server-sent events for `stream: true`. What a request
// means is the model half's business (SessionModel); this file only routes, guards and encodes.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import {
  DEFAULT_MAX_BODY_BYTES,
  GatewayError,
  type Gateway,
  type GatewayOptions,
  type GatewayStats,
  type SessionFault,
  type SessionHandle,
  type SessionModel,
  type EngineEndpoints,
} from "./contract.js";
import { chatChunks, chatCompletionJson, completionChunks, completionJson, toChatRequest, toCompletionRequest, type ResponseHead } from "./wire.js";
import { checkChatBody, checkCompletionBody } from "./wire-schema.js";

/** Time a client has to send its headers, and its whole request (not the answer: generation may be slow). */
const HEADERS_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 120_000;

interface Session {
  readonly id: string;
  readonly key: Buffer;
  /** Dropped once the session has closed and its calls settled (the model half may hold much). */
  model: SessionModel | null;
  readonly faults: SessionFault[];
  postedOutcome: unknown;
  closed: boolean;
  readonly inFlight: Set<Promise<unknown>>;
}

/** A refusal that also ends the connection (the rest of the body is not read). */
class TooLarge extends GatewayError {}

export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const stats: GatewayStats = { requests: 0, errors: 0, unauthorized: 0, afterEnd: 0 };
  const sessions = new Map<string, Session>();
  const created = Math.floor(Date.now() / 1000);

  const server = createServer((req, res) => {
    // handle() answers every failure itself; should that ever throw, the connection goes, never the process.
    handle(req, res).catch((error: unknown) => {
      log(`gateway: could not answer a request: ${String(error)}`);
      res.destroy();
    });
  });
  // Node hands CONNECT to a listener and, without one, drops the connection unanswered.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    stats.requests++;
    stats.errors++;
    socket.on("error", () => undefined);
    socket.end("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, POST\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;

  function send(res: ServerResponse, status: number, body: unknown): void {
    answer(res, status, body, false);
  }

  /**
   * Writes one answer (`body` JSON, a string as text, null: no body). `closeAfter`: the request's
   * body was left unread (413), so the answer says `Connection: close` and the connection ends
   * once it is sent; a client told keep-alive would send its next request into a closed socket.
   */
  function answer(res: ServerResponse, status: number, body: unknown, closeAfter: boolean): void {
    if (status >= 400) stats.errors++;
    if (res.destroyed || res.headersSent) return;
    const connection = closeAfter ? { connection: "close" } : {};
    if (closeAfter) res.on("finish", () => res.req.destroy());
    if (body === null) {
      res.writeHead(status, { "content-length": 0, ...connection });
      res.end();
      return;
    }
    const text = typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, { "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json", "content-length": Buffer.byteLength(text), ...connection });
    res.end(text);
  }

  /** A refusal as an OpenAI error object, or in the engine's shape (`engine`: an engine-mode route). */
  function sendError(res: ServerResponse, error: GatewayError, engine?: EngineEndpoints): void {
    const reply = engine ? engine.refusal(error) : { status: error.status, body: { error: { message: error.message, type: error.type, param: error.param, code: error.code } } };
    answer(res, reply.status, reply.body, error instanceof TooLarge);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    res.on("error", () => undefined);
    try {
      await route(req, res);
    } catch (error) {
      if (error instanceof GatewayError) return sendError(res, error);
      // Only the raw method and target are logged: nothing derived from the request may throw here.
      log(`gateway: ${req.method ?? "?"} ${JSON.stringify(req.url ?? "")} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      sendError(res, new GatewayError(500, "the gateway failed to answer this request (the error is in the run's log)", "server_error"));
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = targetOf(req);
    if (target === null) return sendError(res, new GatewayError(400, `the request target ${JSON.stringify((req.url ?? "").slice(0, 200))} is not a URL: send a path such as /v1/models`, "invalid_request_error", null, "invalid_url"), options.engine);
    const path = target.pathname;
    if (options.engine && !path.startsWith("/s/")) return engineRoute(options.engine, req, res, target);
    const match = /^\/s\/([0-9a-f]+)\/(.+?)\/?$/.exec(path);
    const endpoint = match ? `${req.method ?? ""} ${match[2] ?? ""}` : "";
    const known = ["GET v1/models", "POST v1/chat/completions", "POST v1/completions", "POST outcome"];
    if (match === null || !(known.includes(endpoint) || endpoint.startsWith("GET v1/models/"))) {
      throw new GatewayError(404, `no such endpoint: ${req.method ?? ""} ${path} (the gateway serves GET /s/<id>/v1/models, POST /s/<id>/v1/chat/completions, POST /s/<id>/v1/completions and POST /s/<id>/outcome)`, "not_found_error", null, "unknown_url");
    }
    const session = sessions.get(match[1] ?? "");
    if (session === undefined) throw new GatewayError(404, `no session ${match[1] ?? ""} on this gateway: use the OPENAI_BASE_URL given to this episode`, "not_found_error", null, "unknown_session");
    authorize(session, req, path);
    const model = ensureOpen(session, path);
    if (endpoint.startsWith("GET v1/models")) return listModels(res, model, endpoint.slice("GET v1/models/".length));
    const body = await readJson(req);
    ensureOpen(session, path);
    if (endpoint === "POST outcome") {
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw new GatewayError(400, "the outcome must be a JSON object, for example {\"signals\": {...}}", "invalid_request_error", null, "invalid_value");
      session.postedOutcome = body;
      return send(res, 200, {});
    }
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const head: ResponseHead = { id: `${endpoint === "POST v1/completions" ? "cmpl" : "chatcmpl"}-${randomBytes(12).toString("hex")}`, created: Math.floor(Date.now() / 1000), model: model.modelName };
    const wantsUsage = (b: { readonly stream_options?: { readonly include_usage?: boolean | null } | null }) => b.stream_options?.include_usage === true;
    if (endpoint === "POST v1/chat/completions") {
      const checked = checkChatBody(body);
      const request = toChatRequest(checked);
      const result = await track(session, model.chat(request));
      if (abort.signal.aborted) return;
      if (checked.stream === true) return stream(res, chatChunks(head, result, request.logprobs, wantsUsage(checked)));
      return send(res, 200, chatCompletionJson(head, result, request.logprobs));
    }
    const checked = checkCompletionBody(body);
    const request = toCompletionRequest(checked);
    const result = await track(session, model.complete(request));
    if (abort.signal.aborted) return;
    if (checked.stream === true) return stream(res, completionChunks(head, result, request.logprobs, wantsUsage(checked)));
    return send(res, 200, completionJson(head, result, request.logprobs));
  }

  /** Engine mode: a call outside the sessions goes to the engine's routes, with a body read as JSON (none: null). */
  async function engineRoute(engine: EngineEndpoints, req: IncomingMessage, res: ServerResponse, target: URL): Promise<void> {
    let reply;
    try {
      const body = req.method === "GET" || req.method === "HEAD" ? null : await readJson(req, true);
      reply = await engine.answer({ method: req.method ?? "", path: target.pathname.replace(/(.)\/$/, "$1"), query: target.searchParams, body });
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return sendError(res, error, engine);
    }
    answer(res, reply.status, reply.body, false);
  }

  function authorize(session: Session, req: IncomingMessage, path: string): void {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const provided = Buffer.from(given, "utf8");
    // timingSafeEqual needs equal lengths; a key of another length is refused without comparing.
    if (provided.length === session.key.length && timingSafeEqual(provided, session.key)) return;
    stats.unauthorized++;
    session.faults.push({ kind: "wrong_key", message: `${req.method ?? ""} ${path} came with a ${given === "" ? "missing" : "wrong"} API key` });
    throw new GatewayError(401, "wrong or missing API key: send the key given to this episode (OPENAI_API_KEY) as 'Authorization: Bearer <key>'", "authentication_error", null, "invalid_api_key");
  }

  function ensureOpen(session: Session, path: string): SessionModel {
    if (!session.closed && session.model !== null) return session.model;
    stats.afterEnd++;
    session.faults.push({ kind: "after_end", message: `a request to ${path} came after the episode ended` });
    throw new GatewayError(410, "this episode has ended: its session no longer serves requests (finish every model call before reporting the outcome)", "invalid_request_error", null, "session_ended");
  }

  function listModels(res: ServerResponse, served: SessionModel, name: string): void {
    const model = { id: served.modelName, object: "model", created, owned_by: "arl" };
    if (name === "") return send(res, 200, { object: "list", data: [model] });
    if (name !== encodeURIComponent(model.id)) throw new GatewayError(404, `no model ${name}: this session serves ${model.id}`, "not_found_error", "model", "model_not_found");
    send(res, 200, model);
  }

  /** The body as JSON, read no further than maxBodyBytes; `emptyIsNull`: no body reads as null. */
  async function readJson(req: IncomingMessage, emptyIsNull = false): Promise<unknown> {
    const tooLarge = () => new TooLarge(413, `the request body is larger than ${maxBodyBytes} bytes, the gateway's limit`, "invalid_request_error", null, "body_too_large");
    if (Number(req.headers["content-length"] ?? 0) > maxBodyBytes) throw tooLarge();
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const part of req as AsyncIterable<Buffer>) {
        size += part.length;
        if (size > maxBodyBytes) throw tooLarge();
        parts.push(part);
      }
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      // The client closed the connection (or broke its chunked framing) before the body ended: its fault, not the gateway's.
      throw new GatewayError(400, `the request body ended early (${(error as Error).message})`, "invalid_request_error", null, "incomplete_body");
    }
    const text = Buffer.concat(parts).toString("utf8");
    if (emptyIsNull && text.trim() === "") return null;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new GatewayError(400, `the request body is not valid JSON (${(error as Error).message})`, "invalid_request_error", null, "invalid_json");
    }
  }

  /** Counts a model call as in flight until it settles, so that closing the session waits for it. */
  function track<T>(session: Session, call: Promise<T>): Promise<T> {
    const settled = call.then(
      () => undefined,
      () => undefined,
    );
    session.inFlight.add(settled);
    void settled.then(() => session.inFlight.delete(settled));
    return call;
  }

  function stream(res: ServerResponse, chunks: readonly object[]): void {
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const host = options.host ?? "127.0.0.1";
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;

  async function closeSession(session: Session): Promise<void> {
    session.closed = true;
    while (session.inFlight.size > 0) await Promise.all([...session.inFlight]);
    session.model = null;
  }

  return {
    origin,
    stats,
    open(model: SessionModel): SessionHandle {
      const id = randomBytes(16).toString("hex");
      const key = randomBytes(32).toString("hex");
      const session: Session = { id, key: Buffer.from(key, "utf8"), model, faults: [], postedOutcome: undefined, closed: false, inFlight: new Set() };
      sessions.set(id, session);
      return {
        id,
        baseUrl: `${origin}/s/${id}/v1`,
        outcomeUrl: `${origin}/s/${id}/outcome`,
        apiKey: key,
        faults: session.faults,
        get postedOutcome() {
          return session.postedOutcome;
        },
        close: () => closeSession(session),
      };
    },
    async close(): Promise<void> {
      await Promise.all([...sessions.values()].map(closeSession));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The request target as a URL; null for one that is none (`http://[`), which Node passes on. */
function targetOf(req: IncomingMessage): URL | null {
  const target = req.url ?? "/";
  return URL.canParse(target, "http://gateway") ? new URL(target, "http://gateway") : null;
}
