// The HTTP half of the agent gateway (docs/gateway.md): one node:http server per run on
// 127.0.0.1, a session per episode under `/s/<id>`, a per-session key, bounded bodies, OpenAI
// error objects for every refusal and server-sent events for `stream: true`. What a request
// means is the model half's business (SessionModel); this file only routes, guards and encodes.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createSocketServer,
  type AddressInfo,
  type Server as SocketServer,
  type Socket,
} from "node:net";
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
  type SessionOptions,
  type EngineEndpoints,
  type GatewayMessage,
} from "./contract.js";
import { anthropicMessagesEndpoint } from "./anthropic-wire.js";
import { errorBody, type ErrorShape } from "./api-errors.js";
import { tooDeepError } from "./json-depth.js";
import type { ServerEvent, WireEndpoint } from "./endpoints.js";
import { responsesEndpoint } from "./responses-wire.js";
import { chatEndpoint, completionEndpoint } from "./openai-wire.js";

/** Time a client has to send its headers, and its whole request (not the answer: generation may be slow). */
const HEADERS_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 120_000;
/** How often the server checks every connection against those two limits. */
const CHECK_INTERVAL_MS = 1_000;

/** The model-calling routes of a session, each an API's wire format onto the same SessionModel. */
const ENDPOINTS: Readonly<Record<string, WireEndpoint>> = {
  "POST v1/chat/completions": chatEndpoint,
  "POST v1/completions": completionEndpoint,
  "POST v1/responses": responsesEndpoint,
  "POST v1/messages": anthropicMessagesEndpoint,
};

/** The error shape a request's refusals take, once its route is known (OpenAI's otherwise). */
const errorShapes = new WeakMap<ServerResponse, ErrorShape>();

interface Session {
  readonly id: string;
  readonly key: Buffer;
  /** Stored conversations by answer id (Responses' previous_response_id). */
  readonly conversations: Map<string, readonly GatewayMessage[]>;
  /** Dropped once the session has closed and its calls settled (the model half may hold much). */
  model: SessionModel | null;
  readonly faults: SessionFault[];
  postedOutcome: unknown;
  closed: boolean;
  readonly inFlight: Set<Promise<unknown>>;
  /** The unix socket this session alone is served on; its requests come through it only. */
  socketServer: SocketServer | null;
}

/** A refusal that also ends the connection (the rest of the body is not read). */
class TooLarge extends GatewayError {}

export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const stats: GatewayStats = { requests: 0, errors: 0, unauthorized: 0, afterEnd: 0 };
  const sessions = new Map<string, Session>();
  /** Sessions by the SHA-256 of their key, for routes at the root (the digest: no lookup keyed by the secret itself). */
  const sessionsByKey = new Map<string, Session>();
  /** The session a connection came in for, when it came through a session's own socket. */
  const socketSessions = new WeakMap<Socket, Session>();
  const created = Math.floor(Date.now() / 1000);

  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS, requestTimeout);
  // Node checks those limits only every connectionsCheckingInterval (30 s by default), so a slow
  // client would keep its connection up to 30 s past them; a check every second keeps them.
  const server = createServer(
    { connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, headersTimeout), headersTimeout, requestTimeout },
    (req, res) => {
      // handle() answers every failure itself; should that ever throw, the connection goes, never the process.
      handle(req, res).catch((error: unknown) => {
        log(`gateway: could not answer a request: ${String(error)}`);
        res.destroy();
      });
    },
  );
  // Node hands CONNECT to a listener and, without one, drops the connection unanswered.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    stats.requests++;
    stats.errors++;
    socket.on("error", () => undefined);
    socket.end("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, POST\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });

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
    res.writeHead(status, {
      "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
      "content-length": Buffer.byteLength(text),
      ...connection,
    });
    res.end(text);
  }

  /** A refusal in its API's error shape (OpenAI's unless the route said otherwise), or the engine's (`engine`: an engine-mode route). */
  function sendError(res: ServerResponse, error: GatewayError, engine?: EngineEndpoints): void {
    const reply = engine
      ? engine.refusal(error)
      : { status: error.status, body: errorBody(error, errorShapes.get(res) ?? "openai") };
    answer(res, reply.status, reply.body, error instanceof TooLarge);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    res.on("error", () => undefined);
    try {
      await route(req, res);
    } catch (error) {
      // The model half answers its own failures as 500s with the original as the cause: logged, as any other.
      const failure = error instanceof GatewayError ? (error.status >= 500 ? error.cause : undefined) : error;
      // Only the raw method and target are logged: nothing derived from the request may throw here.
      if (failure !== undefined)
        log(
          `gateway: ${req.method ?? "?"} ${JSON.stringify(req.url ?? "")} failed: ${failure instanceof Error ? (failure.stack ?? failure.message) : typeof failure === "string" ? failure : Object.prototype.toString.call(failure)}`,
        );
      if (error instanceof GatewayError) return sendError(res, error);
      sendError(
        res,
        new GatewayError(
          500,
          "the gateway failed to answer this request (the error is in the run's log)",
          "server_error",
        ),
      );
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = targetOf(req);
    if (target === null)
      return sendError(
        res,
        new GatewayError(
          400,
          `the request target ${JSON.stringify((req.url ?? "").slice(0, 200))} is not a URL: send a path such as /v1/models`,
          "invalid_request_error",
          null,
          "invalid_url",
        ),
        options.engine,
      );
    const path = target.pathname;
    if (options.engine && !path.startsWith("/s/")) return engineRoute(options.engine, req, res, target);
    // A session's routes are under its own prefix, or at the root, where its key tells it apart.
    const match = /^(?:\/s\/([0-9a-f]+))?\/(.+?)\/?$/.exec(path);
    const endpoint = match ? `${req.method ?? ""} ${match[2] ?? ""}` : "";
    const wire = ENDPOINTS[endpoint];
    if (wire) errorShapes.set(res, wire.errors);
    if (
      match === null ||
      !(
        wire !== undefined ||
        endpoint === "GET v1/models" ||
        endpoint === "POST outcome" ||
        endpoint.startsWith("GET v1/models/")
      )
    ) {
      throw new GatewayError(
        404,
        `no such endpoint: ${req.method ?? ""} ${path} (the gateway serves GET /s/<id>/v1/models, POST /s/<id>/v1/chat/completions, /v1/completions, /v1/responses, /v1/messages and POST /s/<id>/outcome)`,
        "not_found_error",
        null,
        "unknown_url",
      );
    }
    const session = match[1] === undefined ? sessionOfKey(req, path) : sessions.get(match[1]);
    // A session's own socket serves it alone, and such a session is served through it alone.
    const via = socketSessions.get(req.socket);
    if (session !== undefined && (via !== undefined || session.socketServer !== null) && via !== session) {
      stats.unauthorized++;
      throw new GatewayError(
        403,
        `this connection may not reach session ${match[1] ?? ""}: each sandboxed episode reaches its own session only, through its own socket`,
        "authentication_error",
        null,
        "wrong_channel",
      );
    }
    if (session === undefined)
      throw new GatewayError(
        404,
        `no session ${match[1] ?? ""} on this gateway: use the OPENAI_BASE_URL given to this episode`,
        "not_found_error",
        null,
        "unknown_session",
      );
    authorize(session, req, path);
    const model = ensureOpen(session, path);
    if (endpoint.startsWith("GET v1/models")) return listModels(res, model, endpoint.slice("GET v1/models/".length));
    const body = await readJson(req);
    ensureOpen(session, path);
    if (wire === undefined) {
      if (typeof body !== "object" || body === null || Array.isArray(body))
        throw new GatewayError(
          400,
          'the outcome must be a JSON object, for example {"signals": {...}}',
          "invalid_request_error",
          null,
          "invalid_value",
        );
      session.postedOutcome = body;
      return send(res, 200, {});
    }
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const served = await wire.answer({
      body,
      head: {
        id: `${wire.idPrefix}${randomBytes(12).toString("hex")}`,
        created: Math.floor(Date.now() / 1000),
        model: model.modelName,
      },
      chat: (request) => track(session, model.chat(request)),
      complete: (request) => track(session, model.complete(request)),
      conversations: session.conversations,
    });
    if (abort.signal.aborted) return;
    if ("json" in served) return send(res, 200, served.json);
    return stream(res, served.events, served.done);
  }

  /** The session whose key a request at the root carries (several episodes of one process share a base URL). */
  function sessionOfKey(req: IncomingMessage, path: string): Session {
    const session = sessionsByKey.get(keyDigest(givenKey(req)));
    if (session !== undefined) return session;
    stats.unauthorized++;
    throw new GatewayError(
      401,
      `wrong or missing API key for ${path}: at the gateway's root, the key given to an episode (OPENAI_API_KEY) chooses its session`,
      "authentication_error",
      null,
      "invalid_api_key",
    );
  }

  /** Engine mode: a call outside the sessions goes to the engine's routes, with a body read as JSON (none: null). */
  async function engineRoute(
    engine: EngineEndpoints,
    req: IncomingMessage,
    res: ServerResponse,
    target: URL,
  ): Promise<void> {
    let reply;
    try {
      const body = req.method === "GET" || req.method === "HEAD" ? null : await readJson(req, true);
      reply = await engine.answer({
        method: req.method ?? "",
        path: target.pathname.replace(/(.)\/$/, "$1"),
        query: target.searchParams,
        body,
      });
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return sendError(res, error, engine);
    }
    answer(res, reply.status, reply.body, false);
  }

  function authorize(session: Session, req: IncomingMessage, path: string): void {
    const given = givenKey(req);
    const provided = Buffer.from(given, "utf8");
    // timingSafeEqual needs equal lengths; a key of another length is refused without comparing.
    if (provided.length === session.key.length && timingSafeEqual(provided, session.key)) return;
    stats.unauthorized++;
    session.faults.push({
      kind: "wrong_key",
      message: `${req.method ?? ""} ${path} came with a ${given === "" ? "missing" : "wrong"} API key`,
    });
    throw new GatewayError(
      401,
      "wrong or missing API key: send the key given to this episode (OPENAI_API_KEY, ANTHROPIC_API_KEY) as 'Authorization: Bearer <key>' or 'x-api-key: <key>'",
      "authentication_error",
      null,
      "invalid_api_key",
    );
  }

  function ensureOpen(session: Session, path: string): SessionModel {
    if (!session.closed && session.model !== null) return session.model;
    stats.afterEnd++;
    session.faults.push({ kind: "after_end", message: `a request to ${path} came after the episode ended` });
    throw new GatewayError(
      410,
      "this episode has ended: its session no longer serves requests (finish every model call before reporting the outcome)",
      "invalid_request_error",
      null,
      "session_ended",
    );
  }

  function listModels(res: ServerResponse, served: SessionModel, name: string): void {
    const model = { id: served.modelName, object: "model", created, owned_by: "arl" };
    if (name === "") return send(res, 200, { object: "list", data: [model] });
    if (name !== encodeURIComponent(model.id))
      throw new GatewayError(
        404,
        `no model ${name}: this session serves ${model.id}`,
        "not_found_error",
        "model",
        "model_not_found",
      );
    send(res, 200, model);
  }

  /** The body as JSON, read no further than maxBodyBytes; `emptyIsNull`: no body reads as null. */
  async function readJson(req: IncomingMessage, emptyIsNull = false): Promise<unknown> {
    const tooLarge = () =>
      new TooLarge(
        413,
        `the request body is larger than ${maxBodyBytes} bytes, the gateway's limit`,
        "invalid_request_error",
        null,
        "body_too_large",
      );
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
      throw new GatewayError(
        400,
        `the request body ended early (${(error as Error).message})`,
        "invalid_request_error",
        null,
        "incomplete_body",
      );
    }
    const text = Buffer.concat(parts).toString("utf8");
    if (emptyIsNull && text.trim() === "") return null;
    const deep = tooDeepError(text, "the request body");
    if (deep) throw deep;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new GatewayError(
        400,
        `the request body is not valid JSON (${(error as Error).message})`,
        "invalid_request_error",
        null,
        "invalid_json",
      );
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

  function stream(res: ServerResponse, events: readonly ServerEvent[], done: boolean): void {
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    for (const { event, data } of events)
      res.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
    res.end(done ? "data: [DONE]\n\n" : undefined);
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
    const own = session.socketServer;
    if (own !== null) await new Promise<void>((resolve) => own.close(() => resolve()));
    while (session.inFlight.size > 0) await Promise.all([...session.inFlight]);
    session.model = null;
    session.conversations.clear();
  }

  return {
    origin,
    stats,
    open(model: SessionModel, sessionOptions: SessionOptions = {}): SessionHandle {
      const id = randomBytes(16).toString("hex");
      const key = randomBytes(32).toString("hex");
      const session: Session = {
        id,
        key: Buffer.from(key, "utf8"),
        conversations: new Map(),
        model,
        faults: [],
        postedOutcome: undefined,
        closed: false,
        inFlight: new Set(),
        socketServer: null,
      };
      let ready = Promise.resolve();
      if (sessionOptions.socket !== undefined) {
        const own = createSocketServer((socket) => {
          socketSessions.set(socket, session);
          server.emit("connection", socket);
        });
        session.socketServer = own;
        const socket = sessionOptions.socket;
        ready = new Promise<void>((resolve, reject) => {
          own.once("error", reject);
          own.listen(socket, () => {
            own.off("error", reject);
            resolve();
          });
        });
      }
      sessions.set(id, session);
      sessionsByKey.set(keyDigest(key), session);
      return {
        id,
        baseUrl: `${origin}/s/${id}/v1`,
        anthropicBaseUrl: `${origin}/s/${id}`,
        outcomeUrl: `${origin}/s/${id}/outcome`,
        apiKey: key,
        faults: session.faults,
        get postedOutcome() {
          return session.postedOutcome;
        },
        ready,
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

/** The key a request carries: `Authorization: Bearer <key>` (OpenAI's SDKs) or `x-api-key` (Anthropic's). */
function givenKey(req: IncomingMessage): string {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
  const header = req.headers["x-api-key"];
  return bearer ?? (typeof header === "string" ? header.trim() : "");
}

const keyDigest = (key: string): string => createHash("sha256").update(key).digest("hex");

/** The request target as a URL; null for one that is none (`http://[`), which Node passes on. */
function targetOf(req: IncomingMessage): URL | null {
  const target = req.url ?? "/";
  return URL.canParse(target, "http://gateway") ? new URL(target, "http://gateway") : null;
}
