// `arl env-check` on real env kinds, no mocks: the built-in rooms and sql kinds, and the http kind
// against small HTTP env servers written here (node:http on loopback), one per fault the check
// exists to catch: a reset that ignores its seed, sessions that share one counter, a signal
// outside its declared range (and one the spec does not declare), a step that hangs past the
// env's time limit and one that answers something that is not JSON.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { runArl } from "../helpers/cli.js";
import { skipWithout } from "../envs/host-library-support.js";
import { skipTitle } from "../helpers/skip-reporter.js";

type Mode = "seeded" | "unseeded" | "drifting" | "shared" | "out-of-range" | "hang" | "garbage";

interface Game {
  pos: number;
  steps: number;
}

/** A mulberry32 draw: the start position of (task, seed). */
function startOf(task: number, seed: number): number {
  let t = (seed ^ (task * 0x9e3779b9)) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) % 5;
}

/**
 * The walk task over ARL's http wire format (src/envs/http.ts): start at a position, `move` by 1
 * to 3, done at 10 or more. `mode` says what is wrong with it.
 */
function walkServer(mode: Mode): Server {
  const sessions = new Map<string, Game>();
  const shared: Game = { pos: 0, steps: 0 };
  let next = 0;
  let resets = 0;
  const answer = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const signals = (g: Game) => ({
    progress: mode === "out-of-range" ? g.pos / 5 : Math.min(1, g.pos / 10),
    moves: g.steps,
    ...(mode === "out-of-range" ? { debug_pos: g.pos } : {}),
  });
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      const body = JSON.parse(text) as {
        index: number;
        seed: number;
        session: string;
        call: { arguments: { by: number } };
      };
      const op = req.url?.split("/").at(-1);
      if (op === "reset") {
        const session = `s${next++}`;
        // drifting: the start moves every second reset, so that the two episodes alone agree and later ones do not.
        const start =
          mode === "unseeded"
            ? Math.floor(Math.random() * 1e6)
            : mode === "drifting"
              ? Math.floor(resets / 2) % 5
              : startOf(body.index, body.seed);
        resets++;
        const game = mode === "shared" ? shared : { pos: 0, steps: 0 };
        game.pos = start;
        game.steps = 0;
        sessions.set(session, game);
        return answer(res, { session, observation: `you stand at ${start}`, signals: signals(game) });
      }
      const game = sessions.get(body.session);
      if (!game) return answer(res, { error: "no such session" });
      if (op === "step") {
        if (mode === "hang") return; // never answered
        if (mode === "garbage") {
          res.writeHead(200, { "content-type": "application/json" });
          return res.end("<html>oops</html>");
        }
        game.pos += body.call.arguments.by;
        game.steps++;
        return answer(res, {
          observation: `you stand at ${game.pos}`,
          terminated: game.pos >= 10,
          signals: signals(game),
        });
      }
      if (op === "outcome") return answer(res, { signals: { success: game.pos >= 10 } });
      if (op === "close") {
        sessions.delete(body.session);
        return answer(res, {});
      }
      res.writeHead(404).end();
    });
  });
}

const servers: Server[] = [];
const urls = new Map<Mode, string>();
const dir = mkdtempSync(path.join(tmpdir(), "arl-env-check-"));

beforeAll(async () => {
  for (const mode of ["seeded", "unseeded", "drifting", "shared", "out-of-range", "hang", "garbage"] as const) {
    const server = walkServer(mode);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    urls.set(mode, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  }
});

afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

function spec(name: string, envBlock: string, imports = ""): string {
  const file = path.join(dir, `${name}.arl`);
  writeFileSync(
    file,
    `${imports}experiment ${name} {\n  seed: 7\n  policy { model: "builtin:tiny" }\n${envBlock}\n  reward { r: outcome.success }\n}\n`,
  );
  return file;
}

function walkSpec(mode: Mode, timeout = 5): string {
  return spec(
    `walk_${mode.replace(/-/g, "_")}`,
    `  env walk {
    kind: http
    url: "${urls.get(mode)}"
    tasks: 8
    timeout_s: ${timeout}
    retries: 0
    signals {
      success { scope: outcome, type: bool }
      progress { scope: state, type: number, min: 0, max: 1 }
      moves { scope: state, type: count }
    }
    tool move {
      description: "walk forward"
      parameters { by { type: integer, minimum: 1, maximum: 3 } }
    }
  }`,
  );
}

const findings = (stdout: string): string[] => stdout.split("\n").filter((l) => l.includes("FINDING"));

describe("arl env-check", () => {
  it("a seeded http env passes: deterministic, isolated, its signals in range, with latencies", async () => {
    const run = await runArl(["env-check", walkSpec("seeded")], { cwd: dir });
    expect(run.stderr).toBe("");
    expect(findings(run.stdout)).toEqual([]);
    expect(run.stdout).toContain("probed tasks 0, 4: 4 actions each from calls built from the tools' schemas");
    expect(run.stdout).toMatch(/signal progress \(state, number, \[0, 1\]\): seen 0(\.\d+)? \.\. /);
    expect(run.stdout).toContain("signal success (outcome, bool): seen");
    expect(run.stdout).toMatch(
      /latency: reset median [\d.]+ ms, p95 [\d.]+ ms \(8\); step median [\d.]+ ms, p95 [\d.]+ ms \(\d+\)/,
    );
    expect(run.stdout).toContain("1 env of 1 plan checked");
    expect(run.code).toBe(0);
  });

  it("an http env whose reset ignores the seed fails naming determinism", async () => {
    const run = await runArl(["env-check", walkSpec("unseeded")], { cwd: dir });
    expect(run.code).toBe(1);
    const found = findings(run.stdout);
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]).toMatch(
      /FINDING env 'walk': determinism: task 0, seed \d+: two episodes of the same task and seed, given the same 4 actions, differ: at reset the observation differs/,
    );
    expect(found.some((f) => f.includes("isolation"))).toBe(false);
  });

  it("an http env whose sessions share one counter fails naming isolation", async () => {
    const run = await runArl(["env-check", walkSpec("shared")], { cwd: dir });
    expect(run.code).toBe(1);
    const found = findings(run.stdout);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.includes("isolation:"))).toBe(true);
    expect(found[0]).toMatch(
      /two sessions of the same task stepped interleaved do not each answer what one session alone does \(a third episode alone answers as the first\): at step \d+ the observation differs: "you stand at \d+" \(alone\) vs "you stand at \d+" \(session 1 of 2 stepped interleaved\)/,
    );
  });

  it("an http env whose reset drifts after the two episodes alone is named as determinism by a third, not as isolation", async () => {
    const run = await runArl(["env-check", walkSpec("drifting"), "--tasks", "1"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(findings(run.stdout), run.stdout).toEqual([
      expect.stringMatching(
        /^ {2}FINDING env 'walk': determinism: task 0, seed \d+: episodes of the same task and seed, given the same 4 actions, differ \(the first two alone agreed; a third alone, after two interleaved sessions, did not\): at reset the observation differs: "you stand at 0" \(first\) vs "you stand at 2" \(third\)$/,
      ),
    ]);
  });

  it("a signal outside its declared range is named, and so is a signal the spec does not declare", async () => {
    const run = await runArl(["env-check", walkSpec("out-of-range")], { cwd: dir });
    expect(run.code).toBe(1);
    const found = findings(run.stdout);
    expect(found).toContainEqual(
      expect.stringMatching(
        /signals: signal 'progress' = [\d.]+, outside its declared range \[0, 1\] \(task \d+, seed \d+, (reset|step \d)\)/,
      ),
    );
    expect(found).toContainEqual(expect.stringContaining("signals: the env reports the signal 'debug_pos'"));
    expect(found.some((f) => f.includes("determinism") || f.includes("isolation"))).toBe(false);
  });

  it("a step that hangs past the env's time limit and one that answers malformed are named as faults", async () => {
    const hang = await runArl(["env-check", walkSpec("hang", 0.3), "--tasks", "1", "--steps", "1"], { cwd: dir });
    expect(hang.code).toBe(1);
    expect(findings(hang.stdout)[0]).toMatch(
      /fault: task 0, seed \d+, first episode: step 1 \(move \{"by":1\}\) raised: .*0\.3 s.*\(timeout\)/,
    );
    const garbage = await runArl(["env-check", walkSpec("garbage"), "--tasks", "1", "--steps", "1"], { cwd: dir });
    expect(garbage.code).toBe(1);
    expect(findings(garbage.stdout)[0]).toMatch(
      /fault: task 0, seed \d+, first episode: step 1 \(move \{"by":1\}\) answered malformed: .*\(protocol\)/,
    );
  }, 20_000);

  it("built-in kinds pass: rooms and sql, stepped by their walkthroughs", async () => {
    const rooms = spec("rooms_ok", `  env quest extends rooms.world {}`, `import "std/envs/rooms" as rooms\n`);
    const r = await runArl(["env-check", rooms], { cwd: dir });
    expect(findings(r.stdout)).toEqual([]);
    expect(r.stdout).toContain("actions each from the env's walkthrough");
    expect(r.code).toBe(0);
    const sql = spec("sql_ok", `  env db extends sql.bank_demo {}`, `import "std/envs/sql" as sql\n`);
    const s = await runArl(["env-check", sql], { cwd: dir });
    expect(findings(s.stdout)).toEqual([]);
    expect(s.stdout).toContain("signal result_matches (outcome, bool): seen true");
    expect(s.code).toBe(0);
  });

  it.skipIf(skipWithout("gymnasium"))(
    skipTitle(
      "the shipped gymnasium spec passes on the env host, with calls built from its action tool",
      skipWithout("gymnasium"),
      "needs gymnasium in .venv: npm run setup:envs",
    ),
    async () => {
      const gym = fileURLToPath(new URL("../../experiments/envs/gymnasium.arl", import.meta.url));
      const run = await runArl(["env-check", gym], { cwd: dir });
      expect(findings(run.stdout)).toEqual([]);
      expect(run.stdout).toContain("env 'guess' (gymnasium), of gymnasium_higher_lower/default:");
      expect(run.stdout).toContain("4 actions each from calls built from the tools' schemas");
      expect(run.stdout).toMatch(/signal terminated \(outcome, bool\): seen false, true/);
      expect(run.code).toBe(0);
    },
    120_000,
  );

  it("an agent env is named as not probed, never passed; usage errors exit 2", async () => {
    writeFileSync(path.join(dir, "tasks.jsonl"), Array.from({ length: 10 }, (_, q) => `{"q": ${q}}\n`).join(""));
    const agent = spec(
      "agent_env",
      `  env prog extends agent.program {\n    command: ["python3", "prog.py"]\n    task_file: "./tasks.jsonl"\n    signals { success { scope: outcome, type: bool } }\n  }`,
      `import "std/envs/agent" as agent\n`,
    );
    const a = await runArl(["env-check", agent], { cwd: dir });
    expect(a.code).toBe(1);
    expect(findings(a.stdout)).toEqual([
      expect.stringContaining("FINDING env 'prog': not probed: an agent env's episode is a whole program"),
    ]);
    expect(a.stdout).toContain("not probed");
    const usage = await runArl(["env-check"], { cwd: dir });
    expect(usage.code).toBe(2);
    const unknownEnv = await runArl(["env-check", walkSpec("seeded"), "--env", "nope"], { cwd: dir });
    expect(unknownEnv.code).toBe(2);
    expect(unknownEnv.stderr).toContain("no env of that name (they have walk)");
  });
});
