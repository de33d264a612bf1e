// TextWorld through the env host, against the real library (docs/env-host.md, "TextWorld"): two
// w2-o3-q4 games generated here from seeds (shared by the file's tests), their walkthroughs won,
// a wrong command sequence not, every signal equal to what TextWorld's own API reports for the same
// commands; the same seeds generate byte-identical games; a changed cached game is refused; and the
// host's faults (a backend that raises, a hung step, a killed host, a missing library) end only
// their own episodes. Needs TextWorld in .venv (npm run setup:envs); CI installs it, so there it must run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { EnvError, type EnvKind, type Signals } from "../../src/contracts/env.js";
import { envLibraryPythonCandidates } from "../../src/contracts/python.js";
import {
  createHostEnvKinds,
  preparedFileName,
  type HostLibraryEnv,
} from "../../src/envs/adapters/env-host/libraries.js";
import { textworldLibrary } from "../../src/contracts/libraries/textworld.js";

const python = envLibraryPythonCandidates()[0] ?? "python3";
const hasTextWorld = spawnSync(python, ["-c", "import textworld"], { stdio: "ignore" }).status === 0;
const skip = !hasTextWorld && !process.env.CI;
const TEXTWORLD_NEED = "needs textworld in .venv: npm run setup:envs, which builds its jericho with gcc";
const FIXTURES = path.join(import.meta.dirname, "fixtures");

/** A textworld env as the plan holds it: w2-o3-q4, seeds 1 and 2. */
function textworldEnv(overrides: Partial<Record<string, unknown>> = {}): HostLibraryEnv {
  return {
    kind: "textworld",
    description: null,
    version: "1",
    tasks: 2,
    split: { train: 0.5, valid: 0, test: 0.5 },
    weight: 1,
    signals: {},
    optimal_steps: 4,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    timeout_s: 30,
    action_tool: "act",
    prepare_timeout_s: 600,
    world_size: 2,
    objects: 3,
    quest_length: 4,
    quest_breadth: 1,
    seeds: [1, 2],
    first_seed: 0,
    games: null,
    admissible_commands: false,
    challenge: null,
    challenge_settings: {},
    ...overrides,
  };
}

const act = (command: string) => ({ name: "act", arguments: { command } });

async function play(
  kind: EnvKind<HostLibraryEnv>,
  env: HostLibraryEnv,
  task: number,
  commands: readonly string[],
): Promise<{ states: Signals[]; outcome: Signals; text: string }> {
  const instance = await kind.create(env, task, 0);
  const first = await instance.reset();
  const states = [first.signals];
  let text = first.text;
  for (const command of commands) {
    const step = await instance.step(act(command));
    states.push(step.signals);
    text = step.text;
    if (step.terminated) break;
  }
  const outcome = await instance.outcome();
  await instance.close();
  return { states, outcome, text };
}

describe.skipIf(skip)(skipTitle("TextWorld through the env host", skip, TEXTWORLD_NEED), () => {
  let cache: string;
  let runDir: string;
  let kind: EnvKind<HostLibraryEnv>;
  const env = textworldEnv();
  const logs: string[] = [];

  beforeAll(async () => {
    cache = mkdtempSync(path.join(tmpdir(), "arl-tw-cache-"));
    runDir = mkdtempSync(path.join(tmpdir(), "arl-tw-run-"));
    kind = createHostEnvKinds([textworldLibrary], { root: runDir, cacheDir: cache, python }).get("textworld")!;
    await kind.provision!(env, { name: "games", runDir, log: (l) => logs.push(l), tools: [] });
  }, 120_000);
  afterAll(async () => {
    await kind.shutdown?.();
  });

  it("records each generated game's sha256 in the run directory, and the vocabulary holds the games' words", () => {
    const record = JSON.parse(readFileSync(path.join(runDir, preparedFileName("games")), "utf8")) as {
      files: { task: number; seed: number; sha256: string }[];
    };
    expect(record.files.map((f) => [f.task, f.seed])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(record.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256))).toBe(true);
    expect(logs.join("\n")).toMatch(/textworld 1\.7\.0 prepared 2 tasks/);
    const words = kind.vocabulary(env);
    expect(words).toContain("north");
    expect(words.length).toBeGreaterThan(100);
  });

  it("plays the walkthrough to a win, with the signals TextWorld's own API reports for the same commands; a wrong sequence does not win", async () => {
    const walkthrough = (await kind.walkthrough!(env, 0))!.map((c) => String(c.arguments.command));
    expect(walkthrough.length).toBeGreaterThanOrEqual(4);
    const won = await play(kind, env, 0, walkthrough);
    expect(won.outcome).toMatchObject({ won: true, lost: false, success: true });
    const wrong = ["look", "inventory", "examine floor", "go west", "wait"];
    const lost = await play(kind, env, 0, wrong);
    expect(lost.outcome).toMatchObject({ won: false, success: false });
    // TextWorld's own API on the same game file and the same commands.
    const record = JSON.parse(readFileSync(path.join(runDir, preparedFileName("games")), "utf8")) as {
      files: { path: string }[];
    };
    const script = [
      "import json, sys, textworld",
      "infos = textworld.EnvInfos(won=True, lost=True, score=True, max_score=True, moves=True, intermediate_reward=True)",
      "env = textworld.start(sys.argv[1], request_infos=infos)",
      "s = env.reset(); out = [s]",
      "for c in json.loads(sys.argv[2]):",
      "    s, _, done = env.step(c); out.append(s)",
      "    if done: break",
      "print(json.dumps([{'won': bool(x.won), 'lost': bool(x.lost), 'score': float(x.score), 'max_score': float(x.max_score), 'moves': int(x.moves), 'score_fraction': float(x.score) / float(x.max_score) if x.max_score else 0.0, 'intermediate_reward': float(x.intermediate_reward or 0)} for x in out]))",
    ].join("\n");
    for (const [commands, played] of [
      [walkthrough, won],
      [wrong, lost],
    ] as const) {
      const own = spawnSync(python, ["-c", script, record.files[0]!.path, JSON.stringify(commands)], {
        encoding: "utf8",
      });
      expect(own.status, own.stderr).toBe(0);
      const theirs = JSON.parse(own.stdout) as Record<string, unknown>[];
      expect(played.states.map(({ progress: _p, ...rest }) => rest)).toEqual(theirs);
    }
    expect(won.states.at(-1)!.progress).toBe(1);
    expect(won.text).not.toMatch(/\$\$|Would you like to RESTART|^>/m);
  }, 60_000);

  it("plays a command with a backslash, a control character or a line break as one plain line: dumb-frotz's escape '\\help' and a Ctrl-S do not hang the episode, and the walkthrough after them still wins", async () => {
    const walkthrough = (await kind.walkthrough!(env, 0))!.map((c) => String(c.arguments.command));
    const played = await play(kind, env, 0, ["\\help", "\x13 look", "look\nlook", ...walkthrough]);
    expect(played.outcome).toMatchObject({ won: true, success: true });
  }, 60_000);

  it("makes the games of a seed range when no seed list is given: tasks: 2 from first_seed 3 are seeds 3 and 4", async () => {
    const rangeEnv = textworldEnv({ seeds: null, first_seed: 3, tasks: 2 });
    const rangeRun = mkdtempSync(path.join(tmpdir(), "arl-tw-run-"));
    const ranged = createHostEnvKinds([textworldLibrary], { root: rangeRun, cacheDir: cache, python }).get(
      "textworld",
    )!;
    try {
      await ranged.provision!(rangeEnv, { name: "games", runDir: rangeRun, log: () => undefined, tools: [] });
      const record = JSON.parse(readFileSync(path.join(rangeRun, preparedFileName("games")), "utf8")) as {
        files: { task: number; seed: number }[];
      };
      expect(record.files.map((f) => [f.task, f.seed])).toEqual([
        [0, 3],
        [1, 4],
      ]);
    } finally {
      await ranged.shutdown?.();
    }
  }, 120_000);

  it("makes games with a TextWorld challenge's own generator: tw-simple's dense rewards pay subgoals on the way, its sparse ones only the win", async () => {
    const fractions: Record<string, number[]> = {};
    for (const rewards of ["dense", "sparse"]) {
      const challengeEnv = textworldEnv({
        seeds: [1],
        tasks: 1,
        challenge: "tw-simple",
        challenge_settings: { rewards, goal: "detailed" },
      });
      const challengeRun = mkdtempSync(path.join(tmpdir(), "arl-tw-run-"));
      const simple = createHostEnvKinds([textworldLibrary], { root: challengeRun, cacheDir: cache, python }).get(
        "textworld",
      )!;
      try {
        await simple.provision!(challengeEnv, { name: "games", runDir: challengeRun, log: () => undefined, tools: [] });
        const walkthrough = (await simple.walkthrough!(challengeEnv, 0))!.map((c) => String(c.arguments.command));
        const played = await play(simple, challengeEnv, 0, walkthrough);
        expect(played.outcome).toMatchObject({ won: true, success: true });
        fractions[rewards] = played.states.map((s) => Number(s.score_fraction));
      } finally {
        await simple.shutdown?.();
      }
    }
    const dense = fractions.dense!;
    const sparse = fractions.sparse!;
    expect(dense.at(-1)).toBe(1);
    expect(sparse.at(-1)).toBe(1);
    // Dense: points before the winning command; sparse: none until it.
    expect(dense.slice(0, -1).some((f) => f > 0 && f < 1)).toBe(true);
    expect(sparse.slice(0, -1).every((f) => f === 0)).toBe(true);
  }, 120_000);

  it("generates byte-identical games from the same seeds", async () => {
    const again = mkdtempSync(path.join(tmpdir(), "arl-tw-cache-"));
    const otherRun = mkdtempSync(path.join(tmpdir(), "arl-tw-run-"));
    const other = createHostEnvKinds([textworldLibrary], { root: otherRun, cacheDir: again, python }).get("textworld")!;
    try {
      await other.provision!(textworldEnv({ seeds: [1], tasks: 1 }), {
        name: "games",
        runDir: otherRun,
        log: () => undefined,
        tools: [],
      });
    } finally {
      await other.shutdown?.();
    }
    const first = JSON.parse(readFileSync(path.join(runDir, preparedFileName("games")), "utf8")) as {
      files: { sha256: string }[];
    };
    const second = JSON.parse(readFileSync(path.join(otherRun, preparedFileName("games")), "utf8")) as {
      files: { sha256: string }[];
    };
    expect(second.files[0]!.sha256).toBe(first.files[0]!.sha256);
  }, 120_000);

  it("refuses a cached game whose bytes changed since the run recorded them, and writes nothing over it", async () => {
    const recordPath = path.join(runDir, preparedFileName("games"));
    const saved = readFileSync(recordPath, "utf8");
    const record = JSON.parse(saved) as { files: { sha256: string }[] };
    record.files[1]!.sha256 = "0".repeat(64);
    writeFileSync(recordPath, JSON.stringify(record));
    const resumed = createHostEnvKinds([textworldLibrary], { root: runDir, cacheDir: cache, python }).get("textworld")!;
    try {
      await expect(resumed.provision!(env, { name: "games", runDir, log: () => undefined, tools: [] })).rejects.toThrow(
        /game 1 .* has sha256 [0-9a-f]{64}, but this run recorded 0{64}/,
      );
      expect(readFileSync(recordPath, "utf8")).toBe(JSON.stringify(record));
    } finally {
      writeFileSync(recordPath, saved);
      await resumed.shutdown?.();
    }
  }, 60_000);
});

describe.skipIf(skip)(skipTitle("env host faults, on a backend registered for the tests", skip, TEXTWORLD_NEED), () => {
  let kind: EnvKind<HostLibraryEnv>;
  let runDir: string;
  const faulty = { ...textworldEnv(), kind: "faulty", timeout_s: 2 } as unknown as HostLibraryEnv;

  beforeAll(async () => {
    process.env.ARL_ENVHOST_BACKENDS = "faulty=faulty_backend:FaultyBackend";
    process.env.PYTHONPATH = [FIXTURES, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
    runDir = mkdtempSync(path.join(tmpdir(), "arl-faulty-"));
    kind = createHostEnvKinds([{ ...textworldLibrary, kind: "faulty" }], { root: runDir, python }).get("faulty")!;
    await kind.provision!(faulty, { name: "f", runDir, log: () => undefined, tools: [] });
  }, 60_000);
  afterAll(async () => {
    await kind.shutdown?.();
  });

  it("a backend that raises ends that episode as an env error (its last line in the message, the traceback in env-host.log); the other episode goes on", async () => {
    const [a, b] = [await kind.create(faulty, 0, 0), await kind.create(faulty, 1, 0)];
    await a.reset();
    await b.reset();
    await expect(a.step(act("raise"))).rejects.toThrow(
      /ValueError: the library broke on task 0 \(traceback in env-host.log\)/,
    );
    await expect(a.step(act("again"))).rejects.toThrow(/no open episode/);
    expect((await b.step(act("hello"))).text).toBe("you said hello");
    expect(readFileSync(path.join(runDir, "env-host.log"), "utf8")).toMatch(
      /Traceback[\s\S]*faulty_backend\.py[\s\S]*ValueError/,
    );
  });

  it("an open that fails ends that episode only: create still answers, and the episode's reset is the env error (the harness records env_error); the next episode opens", async () => {
    const failed = await kind.create(faulty, 13, 0);
    const error = await failed.reset().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvError);
    expect((error as EnvError).message).toMatch(
      /faulty task 13: opening its episode: .*ValueError: task 13 cannot be opened/,
    );
    await failed.close();
    const next = await kind.create(faulty, 1, 0);
    expect((await next.step(act("go"))).text).toBe("you said go");
  });

  it("a hung step runs into the env's timeout_s: an env error of kind timeout, and the next episode is served", async () => {
    const hung = await kind.create(faulty, 0, 0);
    const error = await hung.step(act("hang")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvError);
    expect((error as EnvError).kind).toBe("timeout");
    const next = await kind.create(faulty, 1, 0);
    expect((await next.step(act("go"))).signals).toEqual({ moves: 1 });
  }, 30_000);

  /** Kills this test process's own env host (the arl_envhost process whose parent it is). */
  function killOurHost(): void {
    const pids = spawnSync("pgrep", ["-f", "arl_envhost"], { encoding: "utf8" }).stdout.trim().split("\n").map(Number);
    const ours = pids.filter(
      (pid) =>
        spawnSync("ps", ["-o", "ppid=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim() === String(process.pid),
    );
    expect(ours.length).toBe(1);
    process.kill(ours[0]!, "SIGKILL");
  }

  it("a host killed mid-episode: that episode is an env error saying so, and a new episode runs on a fresh host", async () => {
    const open = await kind.create(faulty, 0, 0);
    killOurHost();
    await expect(open.step(act("go"))).rejects.toThrow(/env host (was killed|restarted)/);
    const fresh = await kind.create(faulty, 1, 0);
    expect((await fresh.step(act("go"))).text).toBe("you said go");
  }, 30_000);

  it("a host that died before the runtime saw it exit: the request written to it fails as that episode's env error, and the broken pipe is not an unhandled error", async () => {
    const open = await kind.create(faulty, 0, 0);
    killOurHost();
    // Blocks this event loop while the host dies, so the next write goes to its closed pipe before its exit is seen.
    spawnSync("sleep", ["0.3"]);
    await expect(open.step(act("go"))).rejects.toThrow(/env host (was killed|restarted|exited)/);
    const fresh = await kind.create(faulty, 1, 0);
    expect((await fresh.step(act("go"))).text).toBe("you said go");
  }, 30_000);

  it("a library that is not installed is one line naming the setup command", async () => {
    const missing = createHostEnvKinds([textworldLibrary], { root: runDir, python: "/usr/bin/python3" }).get(
      "textworld",
    )!;
    try {
      const error = await missing.provision!(textworldEnv(), {
        name: "games",
        runDir,
        log: () => undefined,
        tools: [],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EnvError);
      const message = (error as Error).message.split(" (traceback")[0]!;
      expect(message).toMatch(/TextWorld is not installed in this Python .*'npm run setup:envs'/);
      expect(message).not.toMatch(/\n|Traceback/);
    } finally {
      await missing.shutdown?.();
    }
  }, 30_000);
});
